import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_CONFIG } from '../config/example.js';
import { ConfigError } from '../config/load.js';
import { configJsonSchema, loadConfig } from './config.js';

/** Editor completion for switchboard.yaml, and unknown keys that say what was meant and where. */
const dir = mkdtempSync(join(tmpdir(), 'sb-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(text: string) {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  try {
    loadConfig({ path, env: {} });
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe('the config JSON Schema', () => {
  const validate = new Ajv2020({ strict: false }).compile(configJsonSchema());

  it('accepts what init writes and every module section, and refuses an unknown or misspelt key', () => {
    expect(validate(parse(EXAMPLE_CONFIG)), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(configJsonSchema().properties as object)).toEqual(
      expect.arrayContaining([
        'server',
        'auth',
        'channels',
        'routes',
        'rules',
        'triggers',
        'egress',
        'tools',
      ]),
    );
    expect(validate({ server: { metrics_publc: true } })).toBe(false);
    expect(validate({ auth: { keys: [{ name: 'x', role: 'boss', key_file: 'k' }] } })).toBe(false);
  });
});

describe('unknown keys', () => {
  it('suggest the nearest key and carry the line number', () => {
    const problems = problemsOf('server:\n  host: 127.0.0.1\n  metrics_publc: true\n');
    expect(problems).toEqual([
      {
        path: 'server.metrics_publc',
        message:
          'unknown key (line 3); did you mean metrics_public? remove it or check its spelling against docs/config.md',
      },
    ]);
  });

  it('find keys inside lists and module sections, and suggest nothing for a key far from any', () => {
    const [inList] = problemsOf('auth:\n  keys:\n    - { name: a, role: agent, key_fil: ./k }\n');
    expect(inList).toMatchObject({
      path: 'auth.keys[0].key_fil',
      message: expect.stringMatching(/^unknown key \(line 3\); did you mean key_file\?/),
    });
    const [top] = problemsOf('data_dir: ./x\nroutse: []\n');
    expect(top?.message).toMatch(/^unknown key \(line 2\); did you mean routes\?/);
    const [far] = problemsOf('zzzzzzzz: 1\n');
    expect(far?.message).toBe('unknown key (line 1); remove it or check its spelling against docs/config.md');
  });
});
