import type { Classified } from '../gate/kinds.js';
import { classify, type KindTable } from './kinds.js';
import type { EventCapability, NativeReply, Normalized, RuntimeAdapter, RuntimeKind } from './runtime.js';
import {
  asRecord,
  at,
  type Facts,
  type Json,
  jsonReply,
  malformed,
  normalizeFacts,
  parseRaw,
  type ReplyAbilities,
  specOf,
  str,
  type Verdict,
  verdictFor,
} from './shared.js';
import { prefix } from '../text/index.js';

/**
 * A runtime adapter as data: which raw fields carry the envelope's facts, and for each reply style
 * which reply each verdict becomes. `defineRuntime` is the one interpreter; what a runtime does
 * that no table says (Cursor's tool names, Codex's argv payload) is a small function in its spec.
 */

/** Where a fact sits in a native payload: a dotted path (`ctx.sessionId`, `workspace_roots.0`), or several tried in order. */
export type Path = string | readonly string[];

/** Which raw fields carry each fact; a fact without a path is absent. Text facts must be non-empty strings. */
export interface FieldMap {
  event: Path;
  sessionId?: Path;
  turnId?: Path;
  toolCallId?: Path;
  agentId?: Path;
  tool?: Path;
  /** The tool's arguments: a JSON object. */
  input?: Path;
  cwd?: Path;
}

/** A post-tool event whose payload reports an error is recorded as `agent.tool.failed`. */
export interface FailureRule {
  event: string;
  error: Path;
  /** Only a non-empty string counts as an error; without it, any value but null does. */
  text?: boolean;
}

/** One row of a runtime's event table: its capability, and how its reply is shaped (`none` or absent: neutral). */
export type EventRow<S extends string = string> = EventCapability & { style?: S };

type Of<K extends Verdict['kind']> = Extract<Verdict, { kind: K }>;

/**
 * What one verdict becomes: the runtime's neutral reply, exit 2 with the reason on stderr, or a JSON
 * body built from the verdict and the native event name.
 */
export type Shape<V extends Verdict> = 'neutral' | 'exit2' | ((v: V, event: string) => Json);

/**
 * How one reply style carries each verdict. Which kinds are present says what the runtime can do:
 * without `ask`, `defer` or `rewrite`, that decision becomes a deny that says why (`verdictFor`).
 */
export interface VerdictReplies {
  /** Absent: the neutral reply. */
  allow?: Shape<Of<'allow'>>;
  /** The runtime can ask its user natively. */
  ask?: Shape<Of<'ask'>>;
  /** The runtime can park the call and resume it later (Claude Code `defer`). */
  defer?: Shape<Of<'defer'>>;
  /** The runtime applies new tool input. */
  rewrite?: Shape<Of<'rewrite'>>;
  /** It merges the new input over the old instead of replacing it, so it cannot remove a field. */
  merges?: true;
  deny: Shape<Of<'deny'>>;
}

export interface RuntimeSpec<S extends string> {
  kind: RuntimeKind;
  adapterVersion: string;
  /** Keyed by the native event name; the capability matrix is this table without `style`. */
  events: Record<string, EventRow<S>>;
  /** The events where the gate decides: their normalized form carries an intent. */
  intentEvents: readonly string[];
  /** Where the payload is when it is not the body (Codex's `notify` program: the last argv item). */
  payload?: (raw: unknown, ctx?: { argv?: string[] }) => unknown;
  /** One map, or one per payload shape. */
  fields: FieldMap | ((p: Json) => FieldMap);
  /** Facts no path can say (Cursor names the tool of its shell and file events); they win over the map. */
  facts?: (event: string, p: Json) => Partial<Facts>;
  /** Each native tool's canonical kind and where its args are (src/runtimes/kinds.ts). */
  kinds: KindTable;
  /** What the table cannot say from the tool alone (Cursor's MCP server is in the payload); undefined: the table decides. */
  classify?: (event: string, p: Json, facts: Facts) => Classified | undefined;
  failure?: FailureRule;
  replies: { [K in Exclude<S, 'none'>]: VerdictReplies };
  /** The body of the no-op reply; null writes nothing on stdout. */
  neutral: Json | null;
  /** The runtime calls the HTTP route itself, so every reply also carries `httpBody`. */
  http?: boolean;
  /** Malformed input: the runtime's native error with the exit code it expects. */
  errorReply: (message: string) => NativeReply;
  defaultTimeoutMs: number | null;
}

/** Exit 2 with the problem on stderr, cut to what the runtime reads: the error most runtimes block on. */
export function exitTwo(message: string, max = Number.POSITIVE_INFINITY): NativeReply {
  return { exitCode: 2, stdout: '', stderr: prefix(`switchboard: ${message}`, max) };
}

export function defineRuntime<S extends string>(spec: RuntimeSpec<S>): RuntimeAdapter {
  const capabilities = Object.fromEntries(
    Object.entries(spec.events).map(([name, { style: _style, ...capability }]) => [name, capability]),
  );
  const identity = { kind: spec.kind, adapterVersion: spec.adapterVersion, capabilities };
  const intentEvents = new Set(spec.intentEvents);
  const http = spec.http === true;
  const neutralReply = () => jsonReply(spec.neutral, { http });

  function normalize(raw: unknown, ctx?: { argv?: string[] }): Normalized {
    const parsed = parseRaw(spec.payload ? spec.payload(raw, ctx) : raw);
    if (!parsed.ok) return malformed(identity, parsed.problem);
    return normalizeFacts(identity, factsOf(spec, parsed.value), parsed.value, intentEvents);
  }

  function reply(n: Normalized, d: Parameters<RuntimeAdapter['reply']>[1]): NativeReply {
    if (n.problem) return spec.errorReply(n.problem);
    const style = specOf(spec.events, n.event)?.style;
    const replies = style === undefined ? undefined : specOf<VerdictReplies>(spec.replies, style);
    if (!d || !replies) return neutralReply();
    const v = verdictFor(d, n.intent?.input, abilitiesOf(replies));
    const answer = answerFor(replies, v, n.event);
    if (answer === 'neutral') return neutralReply();
    if (answer === 'exit2') return jsonReply(null, { exitCode: 2, stderr: v.reason, http });
    return jsonReply(answer, { http });
  }

  return {
    kind: spec.kind,
    adapterVersion: spec.adapterVersion,
    normalize,
    reply,
    neutralReply,
    errorReply: spec.errorReply,
    capabilities,
    defaultTimeoutMs: spec.defaultTimeoutMs,
    classify: (tool, input) => classify(spec.kinds, { tool, input }),
    toolKinds: Object.fromEntries(Object.entries(spec.kinds.tools).map(([tool, row]) => [tool, row.kind])),
  };
}

function abilitiesOf(r: VerdictReplies): ReplyAbilities {
  return {
    ask: r.ask !== undefined,
    defer: r.defer !== undefined,
    rewrite: r.rewrite === undefined ? 'none' : r.merges ? 'merge' : 'replace',
  };
}

function shaped<V extends Verdict>(shape: Shape<V>, v: V, event: string): 'neutral' | 'exit2' | Json {
  return typeof shape === 'function' ? shape(v, event) : shape;
}

function answerFor(r: VerdictReplies, v: Verdict, event: string): 'neutral' | 'exit2' | Json {
  // `verdictFor` yields ask, defer or rewrite only where the table has them; were one missing, the
  // call is refused rather than let through.
  const deny = () => shaped(r.deny, { kind: 'deny', reason: v.reason }, event);
  switch (v.kind) {
    case 'allow':
      return shaped(r.allow ?? 'neutral', v, event);
    case 'pass':
      return 'neutral';
    case 'ask':
      return r.ask ? shaped(r.ask, v, event) : deny();
    case 'defer':
      return r.defer ? shaped(r.defer, v, event) : deny();
    case 'rewrite':
      return r.rewrite ? shaped(r.rewrite, v, event) : deny();
    default:
      return shaped(r.deny, v, event);
  }
}

function first<T>(p: Json, path: Path | undefined, read: (value: unknown) => T | undefined): T | undefined {
  if (path === undefined) return undefined;
  for (const one of typeof path === 'string' ? [path] : path) {
    const value = read(at(p, one));
    if (value !== undefined) return value;
  }
  return undefined;
}

function factsOf<S extends string>(spec: RuntimeSpec<S>, p: Json): Facts {
  const map = typeof spec.fields === 'function' ? spec.fields(p) : spec.fields;
  const text = (path: Path | undefined) => first(p, path, str);
  const event = text(map.event) ?? '';
  const facts: Facts = {
    event,
    sessionId: text(map.sessionId),
    turnId: text(map.turnId),
    toolCallId: text(map.toolCallId),
    agentId: text(map.agentId),
    tool: text(map.tool),
    input: first(p, map.input, asRecord),
    cwd: text(map.cwd),
  };
  if (spec.facts) Object.assign(facts, spec.facts(event, p));
  if (facts.tool) {
    facts.classified =
      spec.classify?.(event, p, facts) ??
      classify(spec.kinds, {
        tool: facts.tool,
        input: facts.input ?? {},
        ...(facts.cwd ? { cwd: facts.cwd } : {}),
      });
  }
  if (spec.failure && failed(spec.failure, event, p)) facts.type = 'agent.tool.failed';
  return facts;
}

function failed(rule: FailureRule, event: string, p: Json): boolean {
  if (event !== rule.event) return false;
  const read = rule.text ? str : (value: unknown) => value ?? undefined;
  return first(p, rule.error, read) !== undefined;
}
