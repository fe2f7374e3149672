import { claudeCode } from './claude-code/adapter.js';
import { codex } from './codex/adapter.js';
import { cursor } from './cursor/adapter.js';
import { geminiCli } from './gemini-cli/adapter.js';
import { hermes } from './hermes/adapter.js';
import { openclaw } from './openclaw/adapter.js';
import type { IntentReader } from '../gate/port.js';
import type { Capability, RuntimeAdapter, RuntimeKind } from './runtime.js';

export type * from './runtime.js';
export { explain } from './shared.js';

/** Every adapter, keyed by the `{runtime}` of `POST /v1/runtimes/{runtime}/hooks` (CONTRACT.md). */
export const RUNTIMES: Readonly<Record<RuntimeKind, RuntimeAdapter>> = Object.freeze({
  'claude-code': claudeCode,
  codex,
  hermes,
  openclaw,
  'gemini-cli': geminiCli,
  cursor,
});

export const RUNTIME_KINDS = Object.keys(RUNTIMES) as RuntimeKind[];

/** The adapter for a path segment; undefined for anything else, including `constructor`. */
export function runtimeFor(name: string): RuntimeAdapter | undefined {
  return Object.hasOwn(RUNTIMES, name) ? RUNTIMES[name as RuntimeKind] : undefined;
}

/** The adapters as the gate reads them (`IntentReader`): wired in by the app root, never imported by the gate. */
export const runtimeIntents: IntentReader = {
  classify: (runtime, tool, input) => runtimeFor(runtime)?.classify(tool, input),
  fromHook(runtime, raw) {
    const n = runtimeFor(runtime)?.normalize(raw);
    if (!n?.intent || !n.classified || n.problem) return undefined;
    return { tool: n.intent.tool, input: n.intent.input, kind: n.classified.kind, args: n.classified.args };
  },
};

export interface CapabilityRow {
  runtime: RuntimeKind;
  adapter_version: string;
  event: string;
  capability: Capability;
  envelope_type: string;
  notes?: string;
}

/** The capability matrix as rows: the body of `GET /v1/runtimes` and the source of `switchboard runtimes`. */
export function capabilityRows(
  adapters: readonly RuntimeAdapter[] = Object.values(RUNTIMES),
): CapabilityRow[] {
  return adapters.flatMap((adapter) =>
    Object.entries(adapter.capabilities).map(([event, spec]) => {
      const row: CapabilityRow = {
        runtime: adapter.kind,
        adapter_version: adapter.adapterVersion,
        event,
        capability: spec.capability,
        envelope_type: spec.envelopeType,
      };
      if (spec.notes) row.notes = spec.notes;
      return row;
    }),
  );
}

/** Plain aligned text, one row per event, for the terminal. */
export function formatCapabilityTable(rows: readonly CapabilityRow[]): string {
  const header = ['RUNTIME', 'EVENT', 'CAPABILITY', 'ENVELOPE TYPE'];
  const cells = [header, ...rows.map((r) => [r.runtime, r.event, r.capability, r.envelope_type])];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** MCP tool names as each runtime spells them; the kinds table in docs/policy.md shows them. */
const MCP_NAMES: Readonly<Record<RuntimeKind, string>> = {
  'claude-code': '`mcp__<server>__<tool>`',
  codex: '`mcp__<server>__<tool>`',
  hermes: '`mcp_<server>_<tool>`',
  openclaw: '`mcp__<server>__<tool>`',
  'gemini-cli': '`mcp_<server>_<tool>`',
  cursor: '`beforeMCPExecution` (server from `url`/`command`)',
};

/** The kinds table of docs/policy.md: one row per kind, each runtime's tools of that kind. */
export function kindTableMarkdown(adapters: readonly RuntimeAdapter[] = Object.values(RUNTIMES)): string {
  const kinds = [...new Set(adapters.flatMap((a) => Object.values(a.toolKinds))), 'mcp'];
  const order = [
    'shell',
    'file.read',
    'file.write',
    'file.edit',
    'file.delete',
    'web.fetch',
    'web.search',
    'mcp',
  ];
  kinds.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
  const header = `| kind | ${adapters.map((a) => a.kind).join(' | ')} |`;
  const rule = `|---|${adapters.map(() => '---|').join('')}`;
  const rows = [...new Set(kinds)].map((kind) => {
    const cells = adapters.map((a) => {
      const tools = Object.entries(a.toolKinds)
        .filter(([, k]) => k === kind)
        .map(([t]) => `\`${t}\``);
      if (kind === 'mcp') tools.push(MCP_NAMES[a.kind]);
      return tools.length > 0 ? tools.join(', ') : '—';
    });
    return `| \`${kind}\` | ${cells.join(' | ')} |`;
  });
  return [header, rule, ...rows].join('\n');
}
