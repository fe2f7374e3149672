import type { Classified, ToolArgs, ToolKind } from './kinds.js';
import { parseShell } from './shell.js';

/**
 * The args CEL sees: what the adapter (or the caller) gave, completed with what the gate derives, so
 * every runtime's intents read alike: `argv` and `commands` for a shell command (src/gate/shell.ts),
 * `host` for a fetch, `paths` for every file kind (`[path]` when only one is named). Every kind has
 * every field CEL may ask for, empty when unknown, so `args.command.contains(…)` on a non-shell
 * intent is false, not an error. Pinned by args.test.ts.
 */
export interface CanonicalArgs {
  command: string;
  cwd: string;
  argv: string[];
  commands: Array<{ argv: string[]; env: string[]; program: string; subcommand: string; flags: string[] }>;
  path: string;
  paths: string[];
  url: string;
  urls: string[];
  host: string;
  query: string;
  server: string;
  tool: string;
  [key: string]: unknown;
}

const FILE_KINDS = new Set<ToolKind>(['file.read', 'file.write', 'file.edit', 'file.delete']);

export function canonicalArgs(c: Classified): CanonicalArgs {
  const a: ToolArgs = c.args;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const command = text(a.command);
  const shell = c.kind === 'shell' && command !== '' ? parseShell(command) : { argv: [], commands: [] };
  let paths = list(a.paths);
  const path = text(a.path) || paths[0] || '';
  if (paths.length === 0 && path !== '' && FILE_KINDS.has(c.kind)) paths = [path];
  let urls = list(a.urls);
  const url = text(a.url) || urls[0] || '';
  if (urls.length === 0 && url !== '') urls = [url];
  const canonical: CanonicalArgs = {
    command,
    cwd: text(a.cwd),
    argv: shell.argv,
    commands: shell.commands,
    path,
    paths,
    url,
    urls,
    host: hostOf(url),
    query: text(a.query),
    server: text(a.server),
    tool: text(a.tool),
  };
  // The keys in the order `{ ...a, command, … }` gives them (the adapter's first), without paying for
  // that literal: spreading and then redefining a dozen keys costs ~8 µs. Most adapters name only
  // keys in canonical order (`command`, `cwd`), and then `canonical` is already that object.
  let i = 0;
  let inOrder = true;
  for (const key in a) if (CANONICAL_KEYS[i++] !== key) inOrder = false;
  if (inOrder) return canonical;
  const out: Record<string, unknown> = {};
  for (const key in a) out[key] = Object.hasOwn(canonical, key) ? canonical[key] : a[key];
  for (const key of CANONICAL_KEYS) if (!Object.hasOwn(out, key)) out[key] = canonical[key];
  return out as CanonicalArgs;
}

const CANONICAL_KEYS = [
  'command',
  'cwd',
  'argv',
  'commands',
  'path',
  'paths',
  'url',
  'urls',
  'host',
  'query',
  'server',
  'tool',
] as const;

/** The host of a URL, lower case, without the port; `""` when it is not one. */
export function hostOf(url: string): string {
  if (url === '') return '';
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}
