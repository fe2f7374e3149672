import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from './setup-codex.js';

let dir: string;
let out: string[];
let err: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-setup-codex-'));
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'repo'));
  out = [];
  err = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const opts = () => ({
  cwd: join(dir, 'repo'),
  home: join(dir, 'home'),
  out: (s: string) => out.push(s),
  err: (s: string) => err.push(s),
});
const codexDir = () => join(dir, 'home', '.codex');
const hooksFile = () => join(codexDir(), 'hooks.json');
const configFile = () => join(codexDir(), 'config.toml');
const tmpLeft = () =>
  existsSync(codexDir()) ? readdirSync(codexDir()).filter((f) => f.endsWith('.tmp')) : [];

describe('switchboard setup codex', () => {
  it('prints both diffs with --dry-run and writes nothing', async () => {
    const outcome = await run({ ...opts(), dryRun: true });
    expect(outcome.hooks.kind).toBe('dry-run');
    expect(outcome.notify.kind).toBe('dry-run');
    expect(existsSync(codexDir())).toBe(false);
    const diff = out.join('');
    expect(diff).toMatch(/^--- \/dev\/null\n\+\+\+ \/.*hooks\.json\n@@ -0,0 \+1,\d+ @@/);
    expect(diff).toContain('+    "PreToolUse": [');
    expect(diff).toContain('+notify = ["switchboard", "hook", "codex"]');
  });

  it('installs hooks and notify in the user’s ~/.codex, then finds them in place', async () => {
    const outcome = await run(opts());
    expect(outcome).toEqual({
      hooks: { kind: 'written', path: hooksFile() },
      notify: { kind: 'written', path: configFile() },
    });
    const hooks = JSON.parse(readFileSync(hooksFile(), 'utf8'));
    expect(hooks.hooks.PreToolUse[0].hooks[0]).toEqual({
      type: 'command',
      command: 'switchboard hook codex',
    });
    expect(readFileSync(configFile(), 'utf8')).toBe('notify = ["switchboard", "hook", "codex"]\n');
    expect(tmpLeft()).toEqual([]);
    expect((await run(opts())).hooks.kind).toBe('unchanged');
    expect((await run(opts())).notify.kind).toBe('unchanged');
  });

  it('edits an existing config.toml in place, keeping comments and tables', async () => {
    mkdirSync(codexDir());
    const before = '# mine\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n';
    writeFileSync(configFile(), before);
    await run(opts());
    expect(readFileSync(configFile(), 'utf8')).toBe(
      '# mine\nmodel = "o3"\nnotify = ["switchboard", "hook", "codex"]\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n',
    );
  });

  it('leaves someone else’s notify alone and says so, still installing the hooks', async () => {
    mkdirSync(codexDir());
    writeFileSync(configFile(), 'notify = ["terminal-notifier"]\n');
    const outcome = await run(opts());
    expect(outcome.notify).toMatchObject({ kind: 'conflict' });
    expect(outcome.hooks.kind).toBe('written');
    expect(readFileSync(configFile(), 'utf8')).toBe('notify = ["terminal-notifier"]\n');
    expect(err.join('')).toMatch(/notify not set: notify is already set to \["terminal-notifier"\]/);
  });

  it('writes only the project hooks.json with --project, since notify lives in the user config', async () => {
    const outcome = await run({ ...opts(), project: true });
    expect(outcome.hooks).toEqual({ kind: 'written', path: join(dir, 'repo', '.codex', 'hooks.json') });
    expect(outcome.notify.kind).toBe('skipped');
    expect(existsSync(configFile())).toBe(false);
  });

  it('writes a custom bridge into both files, and skips notify for one that needs a shell', async () => {
    await run({ ...opts(), bridge: 'node /opt/sb/main.js hook codex' });
    expect(readFileSync(configFile(), 'utf8')).toBe(
      'notify = ["node", "/opt/sb/main.js", "hook", "codex"]\n',
    );
    const shell = await run({ ...opts(), bridge: 'env SWITCHBOARD_KEY=$K switchboard hook codex' });
    expect(shell.notify.kind).toBe('skipped');
    const stop = JSON.parse(readFileSync(hooksFile(), 'utf8')).hooks.Stop;
    expect(stop.map((g: { hooks: { command: string }[] }) => g.hooks[0]?.command)).toContain(
      'env SWITCHBOARD_KEY=$K switchboard hook codex',
    );
  });

  it('changes neither file when one of them cannot be read', async () => {
    mkdirSync(codexDir());
    writeFileSync(hooksFile(), '{ "hooks": [] }');
    await expect(run(opts())).rejects.toThrow(/"hooks" is not an object/);
    expect(existsSync(configFile())).toBe(false);
    writeFileSync(hooksFile(), '{ "hooks": ');
    await expect(run(opts())).rejects.toThrow(/not valid JSON/);
    rmSync(hooksFile());
    writeFileSync(configFile(), 'model = "o3\n');
    await expect(run(opts())).rejects.toThrow(/cannot read it/);
    expect(existsSync(hooksFile())).toBe(false);
    await expect(run({ ...opts(), user: true, project: true })).rejects.toThrow(/choose one scope/);
  });

  it('warns when config.toml defines hooks of its own', async () => {
    mkdirSync(codexDir());
    writeFileSync(configFile(), '[[hooks.PreToolUse]]\n');
    await run(opts());
    expect(err.join('')).toMatch(/also defines \[hooks\]/);
  });
});
