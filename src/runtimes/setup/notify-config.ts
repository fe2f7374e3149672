import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  type Pair,
  parseDocument,
  type Range,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';

/**
 * The switchboard.yaml half of `setup claude-code --notify <channel>`: a channel to notify (an existing
 * one by name, or an ntfy topic URL that becomes a `type: ntfy` channel), a starter route sending this
 * machine's agents' messages there, and optionally `server.public_url`. Pure: text in, text out.
 *
 * The edit is decided on the yaml Document (so the result is what the loader will read), then spliced
 * into the original text so comments, alignment and key order stay exactly as the user wrote them.
 * When the file's shape is one the splice does not handle (a non-empty flow map, say), the Document is
 * printed instead: still every key and comment, with the library's formatting. Pinned by
 * notify-config.test.ts ("keeps the file byte for byte outside the added lines").
 */

type Json = Record<string, unknown>;

/** The name a channel made from a topic URL gets unless `--channel-name` says otherwise. */
export const DEFAULT_NOTIFY_CHANNEL = 'phone';
/**
 * A topic on a public ntfy server is readable by anyone who knows its name, and the messages carry
 * approve links. ntfy's docs ask for an unguessable topic; below this many characters we say so.
 */
export const SHORT_TOPIC_CHARS = 16;

const CHANNEL_NAME = /^[a-z0-9][a-z0-9_-]*$/;
// Same rule as src/channels/ntfy/format.ts: what ntfy accepts as a topic.
const NTFY_TOPIC = /^[-_A-Za-z0-9]{1,64}$/;

export type NotifyTarget =
  | { kind: 'channel'; name: string }
  /** `generated`: the URL named no topic, so this one is new and random (an existing channel's wins). */
  | { kind: 'ntfy'; url: string; topic: string; generated?: true }
  | { kind: 'invalid'; problem: string };

/** A topic nobody can guess (ntfy's own advice): it carries approve links. 24 hex characters. */
export function randomTopic(): string {
  return `sb-${randomBytes(12).toString('hex')}`;
}

/** `--notify` takes a channel name from the config, or an ntfy topic URL `http(s)://host[/path]/<topic>`. */
export function parseNotifyTarget(arg: string): NotifyTarget {
  const usage = 'a channel name from switchboard.yaml, or an ntfy topic URL like https://ntfy.sh/<topic>';
  if (!arg.includes('://')) {
    if (CHANNEL_NAME.test(arg)) return { kind: 'channel', name: arg };
    return { kind: 'invalid', problem: `--notify ${JSON.stringify(arg)} is neither ${usage}` };
  }
  let url: URL;
  try {
    url = new URL(arg);
  } catch {
    return { kind: 'invalid', problem: `--notify ${JSON.stringify(arg)} is not a URL; give ${usage}` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { kind: 'invalid', problem: `--notify takes an http(s) URL, not ${url.protocol}; give ${usage}` };
  }
  if (url.username || url.password) {
    return {
      kind: 'invalid',
      problem:
        '--notify URL carries credentials; give the bare topic URL and put an access token in channels.<name>.token_env',
    };
  }
  if (url.search || url.hash) {
    return { kind: 'invalid', problem: '--notify URL has a query or fragment; give the bare topic URL' };
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const topic = segments.pop();
  if (!topic) return { kind: 'ntfy', url: url.origin, topic: randomTopic(), generated: true };
  if (!NTFY_TOPIC.test(decodeURIComponent(topic))) {
    return {
      kind: 'invalid',
      problem: `--notify topic ${JSON.stringify(decodeURIComponent(topic))} is not an ntfy topic (1-64 of A-Z a-z 0-9 _ -)`,
    };
  }
  const base = `${url.origin}${segments.length ? `/${segments.join('/')}` : ''}`;
  return { kind: 'ntfy', url: base, topic };
}

export interface NotifyConfigOptions {
  target: Exclude<NotifyTarget, { kind: 'invalid' }>;
  /** Name for a channel made from a topic URL (default `phone`). */
  channelName?: string;
  /** Agent key names whose messages the route sends; default every agent key not bound to a task. */
  agents?: string[];
  /** Written to `server.public_url` when given. */
  publicUrl?: string;
  /** A plain-HTTP ntfy (a LAN or loopback server) on purpose: its host is added to `egress.allow`. */
  allowPlainHttp?: boolean;
  /** SWITCHBOARD_PUBLIC_URL counts as a public URL (the loader applies it over the file). */
  env?: NodeJS.ProcessEnv;
}

export type NotifyConfigOutcome =
  | {
      kind: 'ok';
      text: string;
      changed: boolean;
      channel: string;
      /** What was added, for the one line the command prints. */
      added: string[];
      warnings: string[];
      /** The ntfy server and topic the phone subscribes to (an ntfy target only). */
      url?: string;
      topic?: string;
    }
  | { kind: 'invalid'; problem: string };

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The route's `match`: the agent's own key name (reports, approvals) or that name with a `:` suffix
 * (runtime signals name their reporter `<key>:<project>:<session>`, docs/signals.md "Scope").
 */
export function agentMatch(agents: readonly string[]): string {
  return agents
    .map((a) => `agent == ${celString(a)} || agent.startsWith(${celString(`${a}:`)})`)
    .join(' || ');
}

function celString(s: string): string {
  return JSON.stringify(s);
}

export function planNotifyConfig(text: string, options: NotifyConfigOptions): NotifyConfigOutcome {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      kind: 'invalid',
      problem: `not valid YAML (${doc.errors[0]!.message.split('\n')[0]}); fix it first`,
    };
  }
  const raw = (doc.toJS() ?? {}) as unknown;
  if (!isRecord(raw)) return { kind: 'invalid', problem: 'the config is not a YAML mapping' };
  for (const key of ['channels', 'server'] as const) {
    if (raw[key] !== undefined && raw[key] !== null && !isRecord(raw[key])) {
      return { kind: 'invalid', problem: `"${key}" is not a mapping` };
    }
  }
  if (raw.routes !== undefined && raw.routes !== null && !Array.isArray(raw.routes)) {
    return { kind: 'invalid', problem: '"routes" is not a list' };
  }
  const channels = (raw.channels ?? {}) as Json;
  const routes = (raw.routes ?? []) as unknown[];
  const warnings: string[] = [];
  const added: string[] = [];
  const edits: Edit[] = [];

  // The channel.
  let channel: string;
  let topic: string | undefined = targetTopic(options.target);
  const target = options.target;
  if (target.kind === 'channel') {
    if (!isRecord(channels[target.name])) {
      const known = Object.keys(channels);
      return {
        kind: 'invalid',
        problem: `no channel named "${target.name}" under channels:${known.length ? ` (there are: ${known.join(', ')})` : ''}; add it there (docs/channels.md), or pass an ntfy topic URL: --notify https://ntfy.sh/<topic>`,
      };
    }
    channel = target.name;
  } else {
    const same = Object.entries(channels).find(
      ([, c]) =>
        isRecord(c) &&
        c.type === 'ntfy' &&
        typeof c.url === 'string' &&
        c.url.replace(/\/+$/, '') === target.url &&
        (c.topic === target.topic || target.generated === true),
    );
    if (same) {
      channel = same[0];
      topic = String((same[1] as Json).topic);
    } else {
      channel = options.channelName ?? DEFAULT_NOTIFY_CHANNEL;
      if (!CHANNEL_NAME.test(channel)) {
        return {
          kind: 'invalid',
          problem: `--channel-name ${JSON.stringify(channel)}: channel names are lower-case letters, digits, - and _`,
        };
      }
      if (channels[channel] !== undefined) {
        return {
          kind: 'invalid',
          problem: `channels.${channel} already exists and is not ${target.url}/${target.topic}; nothing was changed. Pass --channel-name <another name> to add the topic beside it, or --notify ${channel} to use the existing channel`,
        };
      }
      edits.push({
        kind: 'map',
        path: ['channels'],
        key: channel,
        value: { type: 'ntfy', url: target.url, topic: target.topic },
      });
      added.push(`channel ${channel} (ntfy ${target.url}/${target.topic})`);
    }
    if (target.topic.length < SHORT_TOPIC_CHARS) {
      warnings.push(
        `the ntfy topic "${target.topic}" is short: anyone who guesses a topic on a shared server reads its messages, approve links included; use a long random one (give --notify the server alone, https://ntfy.sh, and setup makes one)`,
      );
    }
    const allow = isRecord(raw.egress) && Array.isArray(raw.egress.allow) ? raw.egress.allow : [];
    const host = new URL(target.url).hostname;
    if (target.url.startsWith('http:') && !allow.includes(host)) {
      // Refused, not warned: a channel the guard refuses would drop every approval without a sound.
      if (!options.allowPlainHttp) {
        return {
          kind: 'invalid',
          problem: `${target.url} is plain HTTP, which the egress guard refuses (every message to it would be dropped as blocked); nothing was changed. For an ntfy on your LAN or this machine, pass --allow-plain-http to add "${host}" to egress.allow; otherwise use its https:// URL`,
        };
      }
      edits.push({ kind: 'seq', path: ['egress', 'allow'], value: host });
      added.push(`egress.allow "${host}" (plain HTTP on purpose)`);
    }
  }

  // The route.
  const keys = isRecord(raw.auth) && Array.isArray(raw.auth.keys) ? raw.auth.keys.filter(isRecord) : [];
  const agentKeys = keys
    .filter((k) => k.role === 'agent' && k.task_id === undefined)
    .map((k) => String(k.name));
  let agents = options.agents ?? agentKeys;
  if (options.agents) {
    const unknown = options.agents.filter((a) => !agentKeys.includes(a));
    if (unknown.length > 0) {
      return {
        kind: 'invalid',
        problem: `--agent ${unknown.join(', ')}: no agent key of that name under auth.keys${agentKeys.length ? ` (there are: ${agentKeys.join(', ')})` : ''}`,
      };
    }
  }
  agents = [...new Set(agents)];
  if (agents.length === 0) {
    return {
      kind: 'invalid',
      problem:
        'auth.keys has no agent key for the route to name; add one, e.g. "- { name: laptop-agent, role: agent, key_env: SB_AGENT_KEY }" (switchboard init writes it)',
    };
  }
  const match = agentMatch(agents);
  const covered = routes.some(
    (r) =>
      isRecord(r) &&
      Array.isArray(r.channels) &&
      r.channels.includes(channel) &&
      (r.match === undefined || r.match === 'true' || r.match === match),
  );
  if (!covered) {
    edits.push({ kind: 'seq', path: ['routes'], value: { match, channels: [channel] } });
    added.push(`a route for ${agents.join(', ')} to ${channel}`);
  }

  // Where the phone's buttons point.
  const server = (raw.server ?? {}) as Json;
  if (options.publicUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(options.publicUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      return {
        kind: 'invalid',
        problem: `--public-url ${JSON.stringify(options.publicUrl)} is not an http(s) URL; give the address your phone reaches this gateway at`,
      };
    }
    if (server.public_url !== options.publicUrl) {
      edits.push({ kind: 'map', path: ['server'], key: 'public_url', value: options.publicUrl });
      added.push(`server.public_url ${options.publicUrl}`);
    }
  } else if (!server.public_url && !options.env?.SWITCHBOARD_PUBLIC_URL) {
    warnings.push(
      'server.public_url is not set: messages reach the phone without Approve/Deny buttons. Set it to an address your phone reaches this gateway at (a LAN or tailnet address, or a tunnel), with --public-url <url>, server.public_url, or SWITCHBOARD_PUBLIC_URL',
    );
  }

  const sub = topic !== undefined && options.target.kind === 'ntfy' ? { topic, url: options.target.url } : {};
  if (edits.length === 0) return { kind: 'ok', text, changed: false, channel, added, warnings, ...sub };
  return { kind: 'ok', text: applyEdits(text, edits), changed: true, channel, added, warnings, ...sub };
}

function targetTopic(t: NotifyTarget): string | undefined {
  return t.kind === 'ntfy' ? t.topic : undefined;
}

// ---- Editing -------------------------------------------------------------------------------------

type Edit =
  | { kind: 'map'; path: string[]; key: string; value: unknown }
  | { kind: 'seq'; path: string[]; value: unknown };

/** Applies the edits on the Document (the truth), then tries to reproduce that by splicing the text. */
function applyEdits(text: string, edits: Edit[]): string {
  const expected = parseDocument(text);
  for (const e of edits) {
    if (e.kind === 'map') {
      ensure(expected, e.path, 'map');
      expected.setIn([...e.path, e.key], expected.createNode(e.value, { flow: true }));
    } else {
      ensure(expected, e.path, 'seq');
      (expected.getIn(e.path, true) as YAMLSeq).add(expected.createNode(e.value, { flow: true }));
    }
  }
  const want = expected.toJS();
  let spliced: string | undefined = text;
  for (const e of edits) {
    spliced = spliced === undefined ? undefined : splice(spliced, e);
  }
  if (spliced !== undefined && isDeepStrictEqual(parseDocument(spliced).toJS(), want)) return spliced;
  return expected.toString({ lineWidth: 0 });
}

/** Makes `path` hold a block collection (absent, null or an empty flow `{}`/`[]` become one). */
function ensure(doc: Document, path: string[], kind: 'map' | 'seq'): void {
  const node = doc.getIn(path, true);
  if (kind === 'map' ? isMap(node) : isSeq(node)) {
    const c = node as YAMLMap | YAMLSeq;
    if (c.items.length === 0) c.flow = false;
    return;
  }
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) {
    doc.setIn(path, kind === 'map' ? doc.createNode({}) : doc.createNode([]));
    (doc.getIn(path, true) as YAMLMap | YAMLSeq).flow = false;
  }
}

/** The text with one edit spliced in, or undefined when its shape is not one handled here. */
function splice(text: string, edit: Edit): string | undefined {
  const doc = parseDocument(text);
  const item = edit.kind === 'map' ? `${edit.key}: ${flow(edit.value)}` : `- ${flow(edit.value)}`;
  const parentPath = edit.path.slice(0, -1);
  const last = edit.path[edit.path.length - 1]!;
  const parent = parentPath.length ? doc.getIn(parentPath, true) : doc.contents;
  if (!isMap(parent) || parent.flow) return undefined;
  const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
  if (!pair) {
    // Absent: a new section after the parent's last entry (top level: the end of the file).
    if (parentPath.length > 0) return undefined;
    const body = text.endsWith('\n') || text === '' ? text : `${text}\n`;
    return `${body}${last}:\n  ${item}\n`;
  }
  const keyStart = rangeOf(pair.key)?.[0];
  if (keyStart === undefined) return undefined;
  const keyIndent = column(text, keyStart);
  const value = pair.value;
  const isEmpty =
    value === null ||
    (isScalar(value) && value.value === null) ||
    ((isMap(value) || isSeq(value)) && value.flow && value.items.length === 0);
  if (isEmpty) {
    // `channels: {}`, `routes: []`, `routes:` → the key's line ends with a block of one entry.
    const lineEnd = endOfLine(text, keyStart);
    const line = text.slice(keyStart, lineEnd);
    const colon = line.search(/:(\s|$)/);
    if (colon < 0) return undefined;
    const afterColon = keyStart + colon + 1;
    const rest = text.slice(afterColon, lineEnd);
    const comment = /\s+#.*$/.exec(rest)?.[0] ?? '';
    return `${text.slice(0, afterColon)}${comment}\n${' '.repeat(keyIndent + 2)}${item}${text.slice(lineEnd)}`;
  }
  if ((edit.kind === 'map' && !isMap(value)) || (edit.kind === 'seq' && !isSeq(value))) return undefined;
  const coll = value as YAMLMap | YAMLSeq;
  if (coll.flow) return undefined;
  if (edit.kind === 'map') {
    const existing = (coll as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === edit.key);
    if (existing) return replaceValue(text, existing.value, flow(edit.value));
  }
  // The new entry goes on its own line after the last entry, indented like the first.
  const lastItem = coll.items[coll.items.length - 1];
  const lastNode = edit.kind === 'map' ? ((lastItem as Pair).value ?? (lastItem as Pair).key) : lastItem;
  const firstStart = rangeOf(edit.kind === 'map' ? (coll as YAMLMap).items[0]?.key : coll)?.[0];
  const lastEnd = rangeOf(lastNode)?.[1];
  if (firstStart === undefined || lastEnd === undefined) return undefined;
  const indent = column(text, firstStart);
  const at = endOfLine(text, Math.max(lastEnd - 1, 0));
  return `${text.slice(0, at)}\n${' '.repeat(indent)}${item}${text.slice(at)}`;
}

function replaceValue(text: string, node: unknown, replacement: string): string | undefined {
  const range = rangeOf(node);
  if (!range || !isScalar(node)) return undefined;
  return `${text.slice(0, range[0])}${replacement}${text.slice(range[1])}`;
}

/** A node's `[start, valueEnd, nodeEnd]` offsets in the text it was parsed from. */
function rangeOf(node: unknown): Range | undefined {
  return (node as { range?: Range | null } | null | undefined)?.range ?? undefined;
}

function column(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

function endOfLine(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl;
}

/** A one-line YAML flow form of plain JSON values; the result is checked by re-parsing, never trusted. */
export function flow(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flow).join(', ')}]`;
  if (isRecord(value)) {
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${k}: ${flow(v)}`)
      .join(', ')} }`;
  }
  if (typeof value !== 'string') return JSON.stringify(value);
  // Plain when it cannot be read as anything but this string; single quotes when that is enough.
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(value) && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(value)) {
    return value;
  }
  if (!value.includes("'") && !/[\n\r\t\\]/.test(value)) return `'${value}'`;
  return JSON.stringify(value);
}
