import { z } from 'zod';
import { CHANNELS, PERMISSIONS, PII_KINDS, TOOL_NAME } from './config.js';

/**
 * In-process tools (seed §2.2: a tool registered by importing its module, no network hop): a file
 * named in `reach.modules` exports one tool or a list, each `{ name, schema, run }` plus the same
 * options a `tools:` entry has. `run` gets the checked parameters (defaults filled in) and returns a
 * JSON value; it runs under the same gate, guard, context processing and log as every touch.
 */

export interface InProcessContext {
  signal: AbortSignal;
  caller: string;
  task_id: string | null;
  /** The memory scope: the task's owner for a task-bound key, else the key's name. */
  owner: string;
  /** Stream channel: one partial result (a line of text). */
  partial(text: string): void;
}

export interface InProcessTool {
  name: string;
  description?: string;
  /** The input JSON Schema (closed by default, as in `tools:`). */
  schema: Record<string, unknown>;
  run(params: Record<string, unknown>, ctx: InProcessContext): unknown;
  permission?: (typeof PERMISSIONS)[number];
  timeout?: 'query' | 'write' | 'long';
  timeout_ms?: number;
  concurrency?: number;
  channel?: (typeof CHANNELS)[number];
  estimate_ms?: number;
  context?: { mode?: 'raw' | 'summary' | 'head_tail'; keep?: number; max_string?: number };
  redact?: (typeof PII_KINDS)[number][];
  /** Its results are outside content: a session that touches it is untrusted (docs/policy.md). */
  untrusted?: boolean;
}

/** The options part of an in-process tool, checked like a `tools:` entry (unknown keys refused). */
export const inProcessOptions = z.strictObject({
  name: z.string().regex(TOOL_NAME, 'a tool name is 1–128 of A-Z a-z 0-9 _ . -'),
  description: z.string().max(2000).default(''),
  schema: z.record(z.string(), z.unknown()),
  run: z.custom<InProcessTool['run']>((v) => typeof v === 'function', 'run must be a function'),
  permission: z.enum(PERMISSIONS).default('read'),
  timeout: z.enum(['query', 'write', 'long']).optional(),
  timeout_ms: z.number().int().min(1).max(3_600_000).optional(),
  concurrency: z.number().int().min(1).max(1000).default(5),
  channel: z.enum(CHANNELS).default('sync'),
  estimate_ms: z.number().int().min(0).optional(),
  context: z
    .strictObject({
      mode: z.enum(['raw', 'summary', 'head_tail']).default('raw'),
      keep: z.number().int().min(1).max(100).default(5),
      max_string: z.number().int().min(16).max(100_000).default(500),
    })
    .prefault({}),
  redact: z.array(z.enum(PII_KINDS)).default([]),
  untrusted: z.boolean().default(false),
});

/** The tools a loaded module exports: its default export and every named export that is a tool. */
export function toolsOfModule(mod: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  for (const v of Object.values(mod)) {
    if (Array.isArray(v)) out.push(...v);
    else if (v && typeof v === 'object' && 'run' in v && 'name' in v) out.push(v);
  }
  return [...new Set(out)];
}
