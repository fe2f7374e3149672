import { Writable } from 'node:stream';

/**
 * `serve --log-format pretty`: the same log records, one readable line each (`14:03:07 WARN  msg
 * key=value …`), for a person watching a terminal. JSON (the default) stays the format for machines.
 * Records are pino's, already redacted; this only changes how they are printed.
 */

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const SKIP = new Set(['level', 'time', 'svc', 'msg', 'pid', 'hostname']);

export function prettyLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json; // not a record: print as it came
  }
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 19) : '';
  const level = (LEVELS[Number(rec.level)] ?? String(rec.level)).padEnd(5);
  const fields = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"=]/.test(v) ? v : JSON.stringify(v)}`);
  return [time, level, String(rec.msg ?? ''), ...fields].filter(Boolean).join(' ');
}

export function prettyStream(out: NodeJS.WritableStream = process.stdout): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _enc, done) {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line) out.write(`${prettyLine(line)}\n`);
      done();
    },
  });
}
