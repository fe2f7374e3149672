import { capabilityRows, formatCapabilityTable } from '../runtimes/index.js';

/** `switchboard runtimes`: what each runtime lets a hook do, event by event (docs/runtimes.md). */
export function run(
  opts: { json?: boolean } = {},
  write: (s: string) => void = (s) => {
    process.stdout.write(s);
  },
): void {
  const rows = capabilityRows();
  write(opts.json ? `${JSON.stringify({ runtimes: rows }, null, 2)}\n` : `${formatCapabilityTable(rows)}\n`);
}
