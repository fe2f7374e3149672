import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENV_OVERRIDES } from '../config/env.js';
import { A2A_EXAMPLE, commented, EXAMPLE_CONFIG, TOOLS_EXAMPLE } from '../config/example.js';
import { ConfigError } from '../config/load.js';
import { loadConfig, parseConfig } from './config.js';

const dirs: string[] = [];
function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-cfg-'));
  dirs.push(dir);
  const path = join(dir, 'switchboard.yaml');
  writeFileSync(path, text);
  return path;
}
function problems(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('starts from built-in defaults without a file', () => {
    const { config, source } = loadConfig({ env: {} });
    expect(source).toBe('built-in defaults');
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8787 });
    expect(config.data_dir).toBe('./.switchboard');
    expect(config.store.database_url).toBeUndefined();
  });

  it('parses the example `switchboard init` writes', () => {
    const { config } = loadConfig({ path: file(EXAMPLE_CONFIG), env: {} });
    expect(config.auth.keys.map((k) => k.role)).toEqual(['agent', 'approver', 'admin']);
  });

  it('parses each section the example writes commented out, once uncommented', () => {
    for (const block of [TOOLS_EXAMPLE, A2A_EXAMPLE]) {
      expect(EXAMPLE_CONFIG).toContain(commented(block));
      const { config } = loadConfig({ path: file(EXAMPLE_CONFIG.replace(commented(block), block)), env: {} });
      expect(config.auth.keys).toHaveLength(3);
    }
    const tools = loadConfig({ path: file(TOOLS_EXAMPLE), env: {} }).config.tools;
    expect(Object.keys(tools ?? {})).toEqual(['ticket.query']);
    const a2a = loadConfig({ path: file(A2A_EXAMPLE), env: {} }).config.a2a;
    expect(a2a?.skills.map((k) => k.id)).toEqual(['review']);
  });

  it('lets the environment override the file', () => {
    const path = file('server: { port: 9000 }\n');
    const { config } = loadConfig({
      path,
      env: {
        SWITCHBOARD_PORT: '9100',
        SWITCHBOARD_DATABASE_URL: 'postgres://x@127.0.0.1/y',
        SWITCHBOARD_DATA_DIR: '/tmp/sb',
      },
    });
    expect(config.server.port).toBe(9100);
    expect(config.store.database_url).toBe('postgres://x@127.0.0.1/y');
    expect(config.data_dir).toBe('/tmp/sb');
  });

  it('names every unknown key with its full path', () => {
    const found = problems(() => parseConfig({ server: { prot: 1 }, colour: 'red' }));
    expect(found.map((p) => p.path).sort()).toEqual(['colour', 'server.prot']);
    expect(found[0]!.message).toContain('unknown key');
  });

  it('explains a wrong type and a wrong enum value with the key path', () => {
    const found = problems(() =>
      parseConfig({
        server: { port: 'eighty' },
        auth: { keys: [{ name: 'a', role: 'root', key_env: 'X' }] },
      }),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'server.port' }),
        expect.objectContaining({ path: 'auth.keys[0].role', message: expect.stringContaining('"admin"') }),
      ]),
    );
  });

  it('requires exactly one of key_file, key_env and key for an API key', () => {
    const found = problems(() => parseConfig({ auth: { keys: [{ name: 'a', role: 'agent' }] } }));
    expect(found[0]).toMatchObject({
      path: 'auth.keys[0]',
      message: expect.stringContaining('exactly one of key_file'),
    });
  });

  it('reports YAML syntax errors with their line', () => {
    const found = problems(() => loadConfig({ path: file('server:\n  port: [1,\n'), env: {} }));
    expect(found[0]!.path).toMatch(/^line \d+, column \d+$/);
  });

  it('says how to fix a missing file', () => {
    const found = problems(() => loadConfig({ path: '/nonexistent/switchboard.yaml', env: {} }));
    expect(found[0]!.message).toContain('switchboard init');
  });

  it('documents every key and environment variable in docs/config.md', () => {
    const doc = readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8');
    for (const { env, path } of ENV_OVERRIDES) {
      expect(doc).toContain(`\`${env}\``);
      expect(doc).toContain(`\`${path.join('.')}\``);
    }
    for (const key of [
      'server.body_limit_bytes',
      'store.sqlite_synchronous',
      'vault.key_env',
      'vault.retention_days',
      'auth.keys',
      'tenant.id',
      'egress.allow',
    ]) {
      expect(doc).toContain(`\`${key}\``);
    }
  });
});

describe('module sections', () => {
  it('validates each source with its kind’s schema and names the key path', async () => {
    expect(() =>
      parseConfig({ sources: { github: { type: 'github', secret_env: 'GH_SECRET' } } }, 'test'),
    ).not.toThrow();
    const found = problems(() =>
      parseConfig({ sources: { gh: { type: 'github', secret_env: 'GH', colour: 1 } } }, 'test'),
    );
    expect(found.map((p) => p.path)).toContain('sources.gh.colour');
    const unknownType = problems(() => parseConfig({ sources: { x: { type: 'carrier-pigeon' } } }, 'test'));
    expect(unknownType[0]!.path).toMatch(/^sources\.x/);
  });
});

describe('channel sections', () => {
  it('validates each channel with its kind’s schema and the egress allow-list', async () => {
    expect(() =>
      parseConfig({ channels: { phone: { type: 'ntfy', url: 'https://ntfy.sh', topic: 'agents' } } }, 'test'),
    ).not.toThrow();
    const found = problems(() =>
      parseConfig({ channels: { phone: { type: 'ntfy', url: 'https://ntfy.sh' } } }, 'test'),
    );
    expect(found[0]!.path).toMatch(/^channels\.phone/);
    const egress = problems(() => parseConfig({ egress: { allow: ['10.0.0.0/33'] } }, 'test'));
    expect(egress[0]!.path).toBe('egress.allow[0]');
  });
});

describe('policy sections', () => {
  it('validates rules with the gate’s schema and names the rule', async () => {
    const ok = { id: 'no-force-push', when: 'tool == "Bash"', decision: 'deny', reason_code: 'FORCE_PUSH' };
    expect(() => parseConfig({ rules: [ok] }, 'test')).not.toThrow();
    const found = problems(() => parseConfig({ rules: [{ ...ok, decision: 'maybe' }] }, 'test'));
    expect(found[0]!.path).toBe('rules[0].decision');
  });
});
