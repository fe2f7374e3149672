/**
 * `switchboard policy shadow <draft.yaml>`: runs a draft policy over the gateway's recorded intents
 * (`POST /v1/policy/shadow`, admin key in SWITCHBOARD_KEY) and prints what would change. The draft is
 * linted here first, so its problems carry this file's lines; policy files it names are inlined.
 */

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { stringify } from 'yaml';
import { formatProblem, loadPolicy } from '../gate/load.js';
import type { ShadowReport } from '../gate/port.js';
import { gatewayCall } from './client.js';

export interface ShadowCliOptions {
  since?: string;
  limit?: string;
  json?: boolean;
  url?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

const stdout = (l: string) => process.stdout.write(`${l}\n`);
const stderr = (l: string) => process.stderr.write(`${l}\n`);

/** The YAML the gateway gets: the file as written, or with the rules of its policy files inlined. */
export function draftYaml(
  file: string,
  cwd: string,
): { ok: true; yaml: string } | { ok: false; lines: string[] } {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return { ok: false, lines: [`${file}: ${(e as Error).message}`] };
  }
  const loaded = loadPolicy([{ kind: 'config', name: file, text, base_dir: dirname(path) }]);
  if (!loaded.ok) return { ok: false, lines: loaded.problems.map(formatProblem) };
  if (loaded.files.length === 0) return { ok: true, yaml: text };
  return { ok: true, yaml: stringify({ gate: loaded.policy.gate, rules: loaded.policy.rules }) };
}

export async function shadow(file: string, opts: ShadowCliOptions = {}): Promise<number> {
  const out = opts.out ?? stdout;
  const err = opts.err ?? stderr;
  const draft = draftYaml(file, opts.cwd ?? process.cwd());
  if (!draft.ok) {
    for (const line of draft.lines) err(line);
    return 1;
  }
  const limit = opts.limit === undefined ? undefined : Number(opts.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    err(`--limit: ${opts.limit} is not a positive whole number`);
    return 1;
  }
  const report = (await gatewayCall(
    'POST',
    '/v1/policy/shadow',
    opts,
    {
      roles: ['admin'],
      forbidden: () => 'a shadow run needs an admin key',
    },
    {
      policy_yaml: draft.yaml,
      ...(opts.since !== undefined ? { since: opts.since } : {}),
      ...(limit !== undefined ? { limit } : {}),
    },
  )) as ShadowReport;
  if (opts.json) {
    out(JSON.stringify(report));
    return 0;
  }
  for (const line of formatShadowReport(report, opts.since ?? '7d')) out(line);
  return 0;
}

/** The counts, then one line per changed decision, oldest first. */
export function formatShadowReport(r: ShadowReport, since: string): string[] {
  const lines = [
    `${r.evaluated} recorded intent${r.evaluated === 1 ? '' : 's'} since ${since} re-decided; ${r.changed.length} would change`,
  ];
  // An older server's report has no skipped count.
  if (r.skipped > 0)
    lines.push(`${r.skipped} more could not be re-decided: their payload has left the vault (retention)`);
  for (const [change, n] of Object.entries(r.counts).sort(([, a], [, b]) => b - a)) {
    lines.push(`  ${change.padEnd(28)} ${n}`);
  }
  for (const c of r.changed) {
    lines.push(
      `${c.event_id}  ${c.runtime}  ${c.kind}  ${c.before}→${c.after}  ${c.rule ?? '-'}  ${c.summary}`,
    );
  }
  return lines;
}

/** commander action: an exit code instead of a return value. */
export async function runShadow(file: string, opts: ShadowCliOptions): Promise<void> {
  process.exitCode = await shadow(file, opts);
}
