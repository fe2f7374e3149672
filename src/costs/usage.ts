/**
 * Token usage as the runtimes write it into their transcripts (JSON Lines), read incrementally: each
 * turn's `Stop` reads what was appended since the last one. Pure functions over text; the file
 * reading is in transcript.ts.
 */

/** Tokens of one model; `input` excludes cache reads and writes, which are counted apart. */
export interface ModelUsage {
  model: string;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** What a chunk of transcript adds, and where the next read resumes from. */
export interface ChunkUsage {
  usage: ModelUsage[];
  /** Claude Code: the last message id counted (a message's lines may straddle two reads). */
  lastId: string | null;
  /** Codex: the running totals the chunk ended on, and the model it last named. */
  totals?: CodexTotals;
  model?: string | null;
}

export interface CodexTotals {
  input: number;
  cached: number;
  output: number;
}

const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;

function lines(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // A line cut short or not JSON: transcripts are the runtime's, not ours; skip it.
    }
  }
  return out;
}

function add(byModel: Map<string, ModelUsage>, u: ModelUsage): void {
  const have = byModel.get(u.model);
  if (!have) {
    byModel.set(u.model, { ...u });
    return;
  }
  have.input += u.input;
  have.output += u.output;
  have.cache_read += u.cache_read;
  have.cache_write += u.cache_write;
}

/**
 * Claude Code: every `type: "assistant"` line carries the API response's `message.usage`
 * (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`). One
 * response is written as several lines (one per content block), each repeating the same message id and
 * usage, so a message is counted once, by `message.id`; `skipId` is the last one an earlier read counted.
 */
export function claudeCodeUsage(text: string, skipId: string | null): ChunkUsage {
  const byMessage = new Map<string, ModelUsage>();
  let lastId = skipId;
  let anonymous = 0;
  for (const entry of lines(text)) {
    const e = entry as { type?: unknown; isApiErrorMessage?: unknown; message?: Record<string, unknown> };
    if (e.type !== 'assistant' || !e.message || typeof e.message !== 'object') continue;
    const usage = e.message['usage'] as Record<string, unknown> | undefined;
    if (!usage || typeof usage !== 'object') continue;
    const model = typeof e.message['model'] === 'string' ? e.message['model'] : 'unknown';
    // Claude Code's own synthetic messages (an API error shown as a reply) bill nothing.
    if (model === '<synthetic>') continue;
    const id = typeof e.message['id'] === 'string' ? e.message['id'] : `#${anonymous++}`;
    if (id === skipId) continue;
    byMessage.set(id, {
      model,
      input: count(usage['input_tokens']),
      output: count(usage['output_tokens']),
      cache_read: count(usage['cache_read_input_tokens']),
      cache_write: count(usage['cache_creation_input_tokens']),
    });
    if (!id.startsWith('#')) lastId = id;
  }
  const byModel = new Map<string, ModelUsage>();
  for (const u of byMessage.values()) add(byModel, u);
  return { usage: [...byModel.values()], lastId };
}

/**
 * Codex: the rollout file's `event_msg` lines of `payload.type: "token_count"` carry
 * `info.total_token_usage` (`input_tokens` including `cached_input_tokens`, `output_tokens` including
 * reasoning), a running total for the session. A chunk adds the newest total minus the one the last
 * read ended on, which also makes a repeated `token_count` line count nothing. The model is the last
 * `turn_context` line's, else the hook's own `model` field (`fallbackModel`).
 */
export function codexUsage(
  text: string,
  before: CodexTotals,
  beforeModel: string | null,
  fallbackModel: string | null,
): ChunkUsage {
  let model = beforeModel;
  let prev = before;
  const added = { input: 0, cached: 0, output: 0 };
  for (const entry of lines(text)) {
    const e = entry as { type?: unknown; payload?: Record<string, unknown> };
    const p = e.payload;
    if (!p || typeof p !== 'object') continue;
    if (e.type === 'turn_context' && typeof p['model'] === 'string') model = p['model'];
    if (e.type !== 'event_msg' || p['type'] !== 'token_count') continue;
    const info = p['info'] as { total_token_usage?: Record<string, unknown> } | null | undefined;
    const t = info?.total_token_usage;
    if (!t || typeof t !== 'object') continue;
    const next = {
      input: count(t['input_tokens']),
      cached: count(t['cached_input_tokens']),
      output: count(t['output_tokens']),
    };
    // A running total never goes down; a lower one (a line repeated out of order) adds nothing.
    added.input += Math.max(0, next.input - prev.input);
    added.cached += Math.max(0, next.cached - prev.cached);
    added.output += Math.max(0, next.output - prev.output);
    prev = {
      input: Math.max(next.input, prev.input),
      cached: Math.max(next.cached, prev.cached),
      output: Math.max(next.output, prev.output),
    };
  }
  const usage: ModelUsage[] =
    added.input + added.output > 0
      ? [
          {
            model: model ?? fallbackModel ?? 'unknown',
            input: Math.max(0, added.input - added.cached),
            cache_read: added.cached,
            cache_write: 0,
            output: added.output,
          },
        ]
      : [];
  return { usage, lastId: null, totals: prev, model };
}
