import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual as isEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../gate/evaluate.js';
import type { Decision, NativeReply, RuntimeAdapter } from './runtime.js';

/**
 * The suite every runtime adapter passes (STYLE.md: one shared suite per kind of plug-in). The
 * per-runtime test supplies the fixtures and, from that runtime's documentation, the key paths a reply
 * may carry: several runtimes treat one unexpected field as a failed hook and let the tool run.
 */
export interface RuntimeCaseOptions {
  /** Folder of `<native event name>.json` payloads, one per event of the capability matrix. */
  fixturesDir: string;
  /** Key paths a reply for `event` may carry; `a.b.*` allows anything below `a.b` (rewritten input). */
  allowedKeys(event: string): readonly string[];
}

export const SAMPLE_DECISIONS: Record<Decision['decision'], Decision> = {
  allow: { decision: 'allow', reason_code: 'READ_ONLY' },
  deny: { decision: 'deny', reason_code: 'FORCE_PUSH', reason: 'No force pushes to main' },
  require_approval: {
    decision: 'require_approval',
    reason_code: 'PROD_DEPLOY',
    reason: 'Deploys need a human',
    approval_id: 'apr_01JCASEAPPROVAL0000000000',
  },
  defer: { decision: 'defer', reason_code: 'CHANGE_WINDOW', reason: 'Outside the change window' },
  modify: { decision: 'modify', reason_code: 'REDACTED_ARGS', input: { command: 'echo safe' } },
};

export function loadFixtures(dir: string): Array<{ name: string; payload: unknown }> {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      // App Server methods name events with a slash: their files spell it %2F.
      name: decodeURIComponent(file.slice(0, -'.json'.length)),
      payload: JSON.parse(readFileSync(join(dir, file), 'utf8')),
    }));
}

/** Every leaf key path of a JSON value (`hookSpecificOutput.permissionDecision`); an empty object is a leaf. */
export function keyPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return prefix ? [prefix] : [];
  const entries = Object.entries(value);
  if (entries.length === 0) return prefix ? [prefix] : [];
  return entries.flatMap(([key, inner]) => keyPaths(inner, prefix ? `${prefix}.${key}` : key));
}

export function disallowedKeys(reply: NativeReply, allowed: readonly string[]): string[] {
  const bodies = [reply.stdout ? JSON.parse(reply.stdout) : {}, reply.httpBody ?? {}];
  const ok = (path: string) =>
    allowed.some((rule) => (rule.endsWith('.*') ? path.startsWith(rule.slice(0, -1)) : path === rule));
  return bodies.flatMap((body) => keyPaths(body)).filter((path) => !ok(path));
}

export function runtimeCase(adapter: RuntimeAdapter, options: RuntimeCaseOptions): void {
  const fixtures = loadFixtures(options.fixturesDir);

  describe(`${adapter.kind} adapter (shared runtime suite)`, () => {
    it('has a fixture for every event of its capability matrix', () => {
      const names = new Set(fixtures.map((f) => f.name));
      expect(Object.keys(adapter.capabilities).filter((event) => !names.has(event))).toEqual([]);
    });

    for (const { name, payload } of fixtures) {
      it(`normalizes ${name} to its catalogue type with runtime, session and a redacted summary`, () => {
        const n = adapter.normalize(payload);
        expect(n.problem).toBeUndefined();
        expect(n.event).toBe(name);
        const spec = adapter.capabilities[name];
        expect(spec).toBeDefined();
        const [envelope] = n.envelopes;
        expect(envelope?.type).toBe(spec?.envelopeType);
        expect(envelope?.runtime).toEqual({ kind: adapter.kind, adapter_version: adapter.adapterVersion });
        expect(envelope?.execution?.session_id ?? undefined).toBe(n.sessionId);
        expect(n.sessionId).toBeTruthy();
        const summary = envelope?.redacted_summary ?? {};
        expect(Object.keys(summary).every((k) => ['event', 'tool', 'cwd'].includes(k))).toBe(true);
        expect(summary.event).toBe(name);
        expect(String(summary.cwd ?? '')).not.toContain('/');
        expect(n.blocking).toBe(spec?.capability === 'can_block' || spec?.capability === 'needs_user_input');
        if (n.intent) expect(n.blocking).toBe(true);
      });

      it(`answers ${name} with only the keys its documentation allows, for every decision`, () => {
        const n = adapter.normalize(payload);
        for (const d of [null, ...Object.values(SAMPLE_DECISIONS)]) {
          const reply = adapter.reply(n, d);
          if (reply.stdout) expect(typeof JSON.parse(reply.stdout)).toBe('object');
          expect(disallowedKeys(reply, options.allowedKeys(name))).toEqual([]);
        }
      });

      const spec = adapter.capabilities[name];
      if (spec?.capability === 'can_block' || spec?.capability === 'needs_user_input') {
        it(`can deny and allow ${name}, and the two replies differ`, () => {
          const n = adapter.normalize(payload);
          const deny = adapter.reply(n, SAMPLE_DECISIONS.deny);
          const allow = adapter.reply(n, SAMPLE_DECISIONS.allow);
          expect(deny).not.toEqual(allow);
          expect(deny).not.toEqual(adapter.neutralReply());
        });
      }
    }

    for (const { name, payload } of fixtures.filter((f) => adapter.normalize(f.payload).intent)) {
      it(`names the approval id on ${name}, or leaves the runtime's own prompt up`, () => {
        const n = adapter.normalize(payload);
        const reply = adapter.reply(n, SAMPLE_DECISIONS.require_approval);
        if (isEqual(reply, adapter.neutralReply())) return;
        const text = reply.stdout + reply.stderr + JSON.stringify(reply.httpBody ?? '');
        expect(text).toContain(SAMPLE_DECISIONS.require_approval.approval_id);
      });

      it(`never lets ${name} run on a modify without input, and says so on a defer`, () => {
        const n = adapter.normalize(payload);
        const broken = adapter.reply(n, { decision: 'modify', reason_code: 'BROKEN' });
        expect(broken).not.toEqual(adapter.reply(n, SAMPLE_DECISIONS.allow));
        const deferred = adapter.reply(n, SAMPLE_DECISIONS.defer);
        expect(deferred.stdout + deferred.stderr).toMatch(/defer/);
      });

      it(`says nothing on ${name} when read-only work goes on with no policy loaded`, () => {
        // An explicit allow would skip the runtime's own permission dialog; the neutral reply keeps it.
        const n = adapter.normalize(payload);
        const noPolicy = evaluate(undefined, { tool: 'Read', input: {} });
        expect(noPolicy).toMatchObject({ decision: 'allow', constraints: { policy_unavailable: true } });
        expect(adapter.reply(n, noPolicy)).toEqual(adapter.neutralReply());
      });

      it(`exits 0 or 2 on ${name}, the only codes a blocking hook is documented to use`, () => {
        const n = adapter.normalize(payload);
        for (const d of Object.values(SAMPLE_DECISIONS))
          expect([0, 2]).toContain(adapter.reply(n, d).exitCode);
      });
    }

    it('keeps an unknown event as agent.runtime.unrecognized and answers it neutrally', () => {
      const n = adapter.normalize({
        hook_event_name: 'SomethingNew',
        session_id: 's1',
        surprise: { nested: 1 },
      });
      expect(n.envelopes).toHaveLength(1);
      expect(n.envelopes[0]?.type).toBe('agent.runtime.unrecognized');
      expect(n.envelopes[0]?.redacted_summary?.keys).toEqual(expect.arrayContaining(['surprise']));
      expect(n.blocking).toBe(false);
      expect(n.intent).toBeUndefined();
      expect(adapter.reply(n, SAMPLE_DECISIONS.deny)).toEqual(adapter.neutralReply());
    });

    it('does not mistake Object.prototype names for known events', () => {
      for (const event of ['constructor', '__proto__', 'toString']) {
        const n = adapter.normalize({ hook_event_name: event, hookEventName: event, event });
        expect(n.envelopes[0]?.type).toBe('agent.runtime.unrecognized');
        expect(adapter.reply(n, SAMPLE_DECISIONS.deny)).toEqual(adapter.neutralReply());
      }
    });

    it('keeps a JSON object without an event name as unrecognized', () => {
      const n = adapter.normalize({});
      expect(n.problem).toBeUndefined();
      expect(n.envelopes[0]?.type).toBe('agent.runtime.unrecognized');
    });

    it('answers malformed input with its native error, never the neutral reply', () => {
      for (const raw of ['{"hook_event_name": ', '[]', '42', 'null', new TextEncoder().encode('nope'), 7]) {
        const n = adapter.normalize(raw);
        expect(n.problem).toBeTruthy();
        expect(n.envelopes[0]?.type).toBe('agent.runtime.unrecognized');
        expect(adapter.reply(n, SAMPLE_DECISIONS.allow)).toEqual(adapter.errorReply(n.problem ?? ''));
      }
      expect(adapter.errorReply('bad input')).not.toEqual(adapter.neutralReply());
    });

    it('declares only catalogue types in its capability matrix', () => {
      for (const spec of Object.values(adapter.capabilities)) {
        expect(spec.envelopeType).toMatch(/^agent\.[a-z_]+\.[a-z_]+$/);
      }
    });
  });
}
