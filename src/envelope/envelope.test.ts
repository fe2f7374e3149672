import { describe, expect, it } from 'vitest';
import {
  buildEnvelope,
  causedBy,
  canonicalJson,
  checkEnvelope,
  EVENT_TYPE_PATTERN,
  EVENT_TYPES,
  isEventType,
  jsonDigest,
  newId,
  parseId,
  toCloudEvent,
} from './index.js';

const DEFAULTS = { tenant_id: 't1', environment: 'prod' };

describe('ids', () => {
  it('are prefixed ULIDs that sort by creation time', () => {
    const a = newId('approval', 1_000);
    const b = newId('approval', 2_000);
    expect(a).toMatch(/^apr_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a < b).toBe(true);
  });

  it('are rejected by the parser under the wrong prefix or with a malformed body', () => {
    const task = newId('task');
    expect(parseId('task', task)).toBe(task);
    expect(parseId('approval', task)).toBeUndefined();
    expect(parseId('task', 'tsk_not-a-ulid')).toBeUndefined();
    expect(parseId('task', 42)).toBeUndefined();
  });

  it('keep the shape of revocation and trigger-run ids that stored rows already carry', () => {
    // Both were minted by hand as `rvk_`/`run_` + ULID before they joined the catalogue.
    expect(newId('revocation')).toMatch(/^rvk_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(newId('run')).toMatch(/^run_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(parseId('run', 'run_01JDZ3R5W8XK2M4N6P8Q0S2T4V')).toBe('run_01JDZ3R5W8XK2M4N6P8Q0S2T4V');
  });
});

describe('digests', () => {
  it('canonicalize as RFC 8785 does: sorted keys, no spaces, ES number form', () => {
    // RFC 8785 §3.2.3 sample values (numbers serialized the ECMAScript way).
    expect(canonicalJson({ b: 1, a: [1e21, 0.000001, -0, 'é'], c: { z: null, y: true } })).toBe(
      '{"a":[1e+21,0.000001,0,"é"],"b":1,"c":{"y":true,"z":null}}',
    );
  });

  it('give the same digest whatever the key order', () => {
    expect(jsonDigest({ tool: 'Bash', input: { a: 1, b: 2 } })).toBe(
      jsonDigest({ input: { b: 2, a: 1 }, tool: 'Bash' }),
    );
    expect(jsonDigest({ a: 1 })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('envelope', () => {
  it('is complete and valid against its JSON Schema when built from a type alone', () => {
    const env = buildEnvelope({ type: 'agent.tool.requested' }, DEFAULTS);
    expect(checkEnvelope(env)).toEqual([]);
    expect(env.correlation_id).toBe(env.event_id);
    expect(env.execution.attempt).toBe(1);
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'event_id',
        'type',
        'schema_version',
        'occurred_at',
        'tenant_id',
        'environment',
        'runtime',
        'actor',
        'execution',
        'correlation_id',
        'causation_id',
        'policy',
        'subject',
        'payload_ref',
        'payload_digest',
        'redacted_summary',
      ]),
    );
  });

  it('fails the schema on an unknown field, a bad id or an unknown type', () => {
    const env = buildEnvelope({ type: 'agent.tool.requested' }, DEFAULTS);
    expect(checkEnvelope({ ...env, extra: 1 }).length).toBeGreaterThan(0);
    expect(checkEnvelope({ ...env, event_id: 'apr_01ARZ3NDEKTSV4RRFFQ69G5FAV' }).length).toBeGreaterThan(0);
    expect(checkEnvelope({ ...env, type: 'agent.updated' }).length).toBeGreaterThan(0);
  });

  it('carries correlation, causation and one more hop to the event it causes', () => {
    const cause = buildEnvelope(
      { type: 'integration.webhook.accepted', execution: { task_id: 'tsk_1' } },
      DEFAULTS,
    );
    const effect = buildEnvelope(causedBy(cause, { type: 'agent.task.submitted' }), DEFAULTS);
    expect(effect).toMatchObject({
      correlation_id: cause.correlation_id,
      causation_id: cause.event_id,
      lineage: { hop_count: 1 },
      execution: { task_id: 'tsk_1' },
    });
  });

  it('keeps every catalogue type in the agent./integration.<noun>.<verb> form', () => {
    for (const t of EVENT_TYPES) expect(t).toMatch(EVENT_TYPE_PATTERN);
    expect(isEventType('agent.updated')).toBe(false);
  });

  it('projects onto a CloudEvents 1.0 event with the envelope as data', () => {
    const env = buildEnvelope(
      { type: 'agent.tool.requested', runtime: { kind: 'claude-code' }, execution: { task_id: 'tsk_9' } },
      DEFAULTS,
    );
    const ce = toCloudEvent(env);
    expect(ce).toMatchObject({
      specversion: '1.0',
      id: env.event_id,
      type: 'dev.switchboard.agent.tool.requested',
      source: 'urn:switchboard/t1/claude-code',
      subject: 'tsk_9',
      correlationid: env.correlation_id,
    });
    expect(ce.data).toBe(env);
    for (const key of Object.keys(ce)) expect(key).toMatch(/^[a-z0-9]+$/);
  });
});
