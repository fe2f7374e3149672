import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capabilityRows, kindTableMarkdown } from './index.js';

describe('docs/runtimes.md', () => {
  it('carries every row of the capability matrix exactly as the code declares it', () => {
    const docs = readFileSync(new URL('../../docs/runtimes.md', import.meta.url), 'utf8');
    const missing = capabilityRows()
      .map(
        (r) =>
          `| \`${r.event}\` | ${r.capability} | \`${r.envelope_type}\` | ${(r.notes ?? '').replaceAll('|', '\\|')} |`,
      )
      .filter((line) => !docs.includes(line));
    expect(missing).toEqual([]);
  });
});

describe('docs/policy.md', () => {
  it('carries the kinds table exactly as the runtime tables declare it', () => {
    const docs = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    expect(docs).toContain(kindTableMarkdown());
  });
});
