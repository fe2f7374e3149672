import type { AgentCard } from '@a2a-js/sdk';
import { sdkRoot } from '../a2a/wire.js';
import type { Egress } from '../egress/index.js';

/**
 * Remote agents' cards: fetched through the egress guard, checked to be A2A v1.0 (a refusal names
 * the field), and read for what routing needs: the skills and the v1.0 JSON-RPC endpoint. A guarded
 * `fetch` for the SDK client lives here too, so every call to an agent leaves through egress.
 */

/** A card larger than this is not a card. */
export const MAX_CARD_BYTES = 256 * 1024;
/** A card fetch that takes longer than this is a dead agent, not a slow one. */
const CARD_TIMEOUT_MS = 10_000;

export class CardError extends Error {
  /** The agent could not be reached (or answered an error): a later fetch may succeed. */
  readonly retryable: boolean;
  constructor(message: string, retryable = false) {
    super(message);
    this.name = 'CardError';
    this.retryable = retryable;
  }
}

export interface ReadCard {
  card: AgentCard;
  /** The card as JSON (what the registry stores and GET shows the skills of). */
  json: Record<string, unknown>;
  name: string;
  skills: string[];
  /** The v1.0 JSON-RPC interface's URL. */
  endpoint: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a card is A2A v1.0 with a JSON-RPC interface and at least one skill; names the field when not. */
export async function readCard(raw: unknown): Promise<ReadCard> {
  if (!isRecord(raw)) throw new CardError('the agent card is not a JSON object');
  if (typeof raw.name !== 'string' || raw.name === '')
    throw new CardError('card.name: required (a non-empty string)');
  if (!Array.isArray(raw.supportedInterfaces))
    throw new CardError(
      'card.supportedInterfaces: required in A2A v1.0 (a v0.3 card has url/preferredTransport instead)',
    );
  const iface = raw.supportedInterfaces.find(
    (i) => isRecord(i) && i.protocolVersion === '1.0' && i.protocolBinding === 'JSONRPC',
  ) as Record<string, unknown> | undefined;
  if (!iface)
    throw new CardError(
      'card.supportedInterfaces: no interface with protocolVersion "1.0" and protocolBinding "JSONRPC"',
    );
  if (typeof iface.url !== 'string' || !/^https?:\/\//.test(iface.url))
    throw new CardError('card.supportedInterfaces[].url: the v1.0 JSON-RPC interface needs an http(s) URL');
  if (!Array.isArray(raw.skills) || raw.skills.length === 0)
    throw new CardError('card.skills: required, with at least one skill (the agent offers nothing else)');
  const skills: string[] = [];
  raw.skills.forEach((s, i) => {
    if (!isRecord(s) || typeof s.id !== 'string' || s.id === '')
      throw new CardError(`card.skills[${i}].id: required (a non-empty string)`);
    skills.push(s.id);
  });
  let card: AgentCard;
  try {
    card = (await sdkRoot()).AgentCard.fromJSON(raw);
  } catch (err) {
    throw new CardError(`the agent card does not parse as A2A v1.0: ${(err as Error).message}`);
  }
  return { card, json: raw, name: raw.name, skills: [...new Set(skills)].sort(), endpoint: iface.url };
}

/** GET the card through the guard; a refused URL, a non-200 or a non-card is a CardError saying which. */
export async function fetchCard(url: string, egress: Pick<Egress, 'send'>): Promise<ReadCard> {
  const r = await egress.send({
    url,
    method: 'GET',
    headers: { accept: 'application/json' },
    timeoutMs: CARD_TIMEOUT_MS,
    maxResponseBytes: MAX_CARD_BYTES,
  });
  if (r.error === 'blocked') throw new CardError(`the egress guard refused ${url}: ${r.detail ?? 'blocked'}`);
  if (r.status === undefined)
    throw new CardError(`the card at ${url} could not be fetched (${r.error ?? 'other'})`, true);
  if (r.status !== 200) throw new CardError(`the card at ${url} answered HTTP ${r.status}`, true);
  if (r.truncated) throw new CardError(`the card at ${url} is larger than ${MAX_CARD_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(r.body ?? '');
  } catch {
    throw new CardError(`the card at ${url} is not JSON`);
  }
  return readCard(raw);
}

/** The largest answer an agent may give one JSON-RPC call. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * A `fetch` for the SDK client that goes through the egress guard (`send`: the static check, the
 * guarded dispatcher, no redirects), with the agent's bearer token when it has one.
 */
export function guardedFetch(egress: Pick<Egress, 'send'>, token: string | undefined): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    if (token) headers.authorization = `Bearer ${token}`;
    const method = (init?.method ?? 'GET').toUpperCase();
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const r = await egress.send({
      url,
      method: method === 'POST' ? 'POST' : 'GET',
      headers,
      ...(body !== undefined ? { body } : {}),
      maxResponseBytes: MAX_ANSWER_BYTES,
      ...(init?.signal ? { signal: init.signal } : {}),
    });
    if (r.error === 'blocked') throw new TypeError(`egress refused: ${r.detail ?? 'blocked'}`);
    if (r.status === undefined) throw new TypeError(`the agent could not be reached (${r.error ?? 'other'})`);
    if (r.truncated) throw new TypeError(`the agent's answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    // A status without a body (204, 304) may not be given one.
    const empty = r.status === 204 || r.status === 304;
    const {
      'content-length': _l,
      'content-encoding': _e,
      'transfer-encoding': _t,
      ...rest
    } = r.headers ?? {};
    return new Response(empty ? null : (r.body ?? ''), { status: r.status, headers: rest });
  };
}
