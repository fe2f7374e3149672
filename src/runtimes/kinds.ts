import type { Classified, ToolArgs, ToolKind } from '../gate/kinds.js';
import { asRecord, at, type Json, str } from './shared.js';

/**
 * One more table per runtime: which canonical kind each native tool is, and where the canonical args
 * sit in its input. `classify` is the one interpreter; a runtime whose tool name alone cannot say
 * (Cursor's MCP event names its server in the payload, not the tool) adds a small function.
 */

/** Dotted paths into the tool input, tried in order; the first non-empty string (or list) wins. */
export type InputPath = string | readonly string[];

type ArgName = 'command' | 'cwd' | 'path' | 'paths' | 'url' | 'urls' | 'query' | 'server' | 'tool';

export interface ToolMapping {
  kind: ToolKind;
  /** Where each canonical arg is in the tool input. A shell's `cwd` falls back to the hook's own `cwd`. */
  args?: Partial<Record<ArgName, InputPath>>;
  /**
   * The input field holding a patch in the `*** Begin Patch` format (Codex and OpenClaw `apply_patch`):
   * every file it names becomes `paths`, and a patch that only adds files is `file.write`, one that
   * only deletes them `file.delete`.
   */
  patch?: InputPath;
  /** A text field whose URLs are the fetch targets (Gemini CLI's `web_fetch` takes a prompt). */
  urlsIn?: InputPath;
}

export interface KindTable {
  /** By the runtime's own tool name. */
  tools: Readonly<Record<string, ToolMapping>>;
  /** Tool names that are MCP tools: the server and tool they name, or undefined. */
  mcp?: (tool: string) => { server: string; tool: string } | undefined;
}

/** What classification reads: the facts of one hook. */
export interface ToolFacts {
  tool: string;
  input: Json;
  cwd?: string;
}

/** The kind and args of one tool call; `other` with no args for a tool the table does not know. */
export function classify(table: KindTable, f: ToolFacts): Classified {
  const row = Object.hasOwn(table.tools, f.tool) ? table.tools[f.tool] : undefined;
  if (row) return fromRow(row, f);
  const mcp = table.mcp?.(f.tool);
  if (mcp) return { kind: 'mcp', args: { server: mcp.server, tool: mcp.tool } };
  return { kind: 'other', args: {} };
}

export function fromRow(row: ToolMapping, f: ToolFacts): Classified {
  const args: ToolArgs = {};
  for (const [name, path] of Object.entries(row.args ?? {}) as [ArgName, InputPath][]) {
    const value = name === 'paths' || name === 'urls' ? listAt(f.input, path) : textAt(f.input, path);
    if (value !== undefined) (args as Record<string, unknown>)[name] = value;
  }
  let kind = row.kind;
  if (row.patch !== undefined) {
    const body = textAt(f.input, row.patch);
    if (body !== undefined) {
      const patch = patchFiles(body);
      if (patch.paths.length > 0) {
        args.paths = patch.paths;
        args.path ??= patch.paths[0];
      }
      kind = patch.kind ?? kind;
    }
  }
  if (row.urlsIn !== undefined) {
    const urls = urlsIn(textAt(f.input, row.urlsIn) ?? '');
    if (urls.length > 0) {
      args.urls = urls;
      args.url ??= urls[0];
    }
  }
  if (args.urls && args.url === undefined) args.url = args.urls[0];
  if (args.paths && args.path === undefined) args.path = args.paths[0];
  if (kind === 'shell' && args.cwd === undefined && f.cwd) args.cwd = f.cwd;
  return { kind, args };
}

/** `mcp__<server>__<tool>` (Claude Code, Codex; plugin servers are `plugin_<plugin>_<server>`). */
export function doubleUnderscoreMcp(tool: string): { server: string; tool: string } | undefined {
  if (!tool.startsWith('mcp__')) return undefined;
  const rest = tool.slice('mcp__'.length);
  const cut = rest.lastIndexOf('__');
  if (cut <= 0 || cut + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, cut), tool: rest.slice(cut + 2) };
}

/**
 * `mcp_<server>_<tool>` (Gemini CLI, Hermes), also the double-underscore form. The single-underscore
 * form cannot tell a server with `_` in its name from a tool with one: the server is read up to the
 * first `_`, so write `args.server.startsWith(…)` for such a server.
 */
export function underscoreMcp(tool: string): { server: string; tool: string } | undefined {
  const double = doubleUnderscoreMcp(tool);
  if (double) return double;
  const m = /^mcp_([^_]+)_(.+)$/.exec(tool);
  return m ? { server: m[1]!, tool: m[2]! } : undefined;
}

function textAt(input: Json, path: InputPath): string | undefined {
  for (const one of typeof path === 'string' ? [path] : path) {
    const value = at(input, one);
    const text = str(value);
    if (text !== undefined) return text;
    // Codex may hand a shell command over as argv: it is joined back the way a shell would read it.
    if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
      return value.map(shellWord).join(' ');
  }
  return undefined;
}

function listAt(input: Json, path: InputPath): string[] | undefined {
  for (const one of typeof path === 'string' ? [path] : path) {
    const value = at(input, one);
    if (Array.isArray(value)) {
      const list = value.filter((v): v is string => typeof v === 'string' && v.length > 0);
      if (list.length > 0) return list;
    }
    const text = str(value);
    if (text !== undefined) return [text];
  }
  return undefined;
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const PATCH_LINE = /^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/;

/** The files a `*** Begin Patch` body touches, and whether it only adds or only deletes. */
export function patchFiles(body: string): { paths: string[]; kind?: ToolKind } {
  const paths: string[] = [];
  const ops = new Set<string>();
  for (const line of body.split(/\r?\n/)) {
    const m = PATCH_LINE.exec(line.trim());
    if (!m) continue;
    ops.add(m[1] ?? 'Update');
    const path = (m[2] ?? m[3] ?? '').trim();
    if (path && !paths.includes(path)) paths.push(path);
  }
  if (ops.size === 1 && ops.has('Add')) return { paths, kind: 'file.write' };
  if (ops.size === 1 && ops.has('Delete')) return { paths, kind: 'file.delete' };
  return { paths };
}

/** http(s) URLs in free text, without trailing punctuation; at most 20, as Gemini CLI takes. */
export function urlsIn(text: string): string[] {
  const found = text.match(/https?:\/\/[^\s<>"'`)\]]+/g) ?? [];
  return [...new Set(found.map((u) => u.replace(/[.,;:!?]+$/, '')))].slice(0, 20);
}

/** An MCP server named by where it runs (Cursor's beforeMCPExecution: `url` or `command`). */
export function serverOf(p: Json): string | undefined {
  const url = str(p.url);
  if (url) {
    try {
      return new URL(url).host;
    } catch {
      return url;
    }
  }
  const command = str(p.command) ?? str(asRecord(p)?.server);
  return command;
}
