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
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { unifiedDiff } from './diff.js';
import { run as runtimes } from './runtimes.js';
import { run } from './setup.js';

/**
 * Claude Code's settings shape for hooks (reference/runtimes.md §1.2–1.3): event → matcher groups →
 * handlers, each handler a `command` with its command line or an `http` call with its URL.
 */
const handler = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['command', 'http', 'mcp_tool', 'prompt', 'agent'] },
    command: { type: 'string', minLength: 1 },
    url: { type: 'string', format: 'uri' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    allowedEnvVars: { type: 'array', items: { type: 'string' } },
    timeout: { type: 'number', exclusiveMinimum: 0 },
    if: { type: 'string' },
    args: { type: 'array', items: { type: 'string' } },
    async: { type: 'boolean' },
    statusMessage: { type: 'string' },
  },
  additionalProperties: false,
  anyOf: [
    { properties: { type: { const: 'command' } }, required: ['command'] },
    { properties: { type: { const: 'http' } }, required: ['url'] },
    { properties: { type: { enum: ['mcp_tool', 'prompt', 'agent'] } } },
  ],
};
const settingsSchema = {
  type: 'object',
  properties: {
    hooks: {
      type: 'object',
      additionalProperties: {
        type: 'array',
        items: {
          type: 'object',
          required: ['hooks'],
          properties: { matcher: { type: 'string' }, hooks: { type: 'array', minItems: 1, items: handler } },
          additionalProperties: false,
        },
      },
    },
  },
};
const ajv = new Ajv({ strict: false, validateFormats: false });
const validSettings = ajv.compile(settingsSchema);

let dir: string;
let out: string[];
let err: string[];
const io = () => ({ out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: {} });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-setup-'));
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'repo'));
  out = [];
  err = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const userFile = () => join(dir, 'home', '.claude', 'settings.json');
const projectFile = () => join(dir, 'repo', '.claude', 'settings.json');
const where = () => ({ cwd: join(dir, 'repo'), home: join(dir, 'home') });

describe('switchboard setup claude-code', () => {
  it('checks its output against a schema that does refuse a wrong shape', () => {
    expect(validSettings({ hooks: { PreToolUse: [{ hooks: [{ type: 'command' }] }] } })).toBe(false);
    expect(validSettings({ hooks: { PreToolUse: [{ matcher: '*', hooks: [] }] } })).toBe(false);
    expect(validSettings({ hooks: { PreToolUse: { hooks: [] } } })).toBe(false);
  });

  it('prints a diff with --dry-run and writes nothing', async () => {
    const outcome = await run({ ...where(), ...io(), user: true, dryRun: true });
    expect(outcome.kind).toBe('dry-run');
    expect(existsSync(userFile())).toBe(false);
    const diff = out.join('');
    expect(diff).toMatch(/^--- \/dev\/null\n\+\+\+ \/.*settings\.json\n@@ -0,0 \+1,\d+ @@/);
    expect(diff).toContain('+    "PreToolUse": [');
    expect(diff).toContain('switchboard hook claude-code');
  });

  it('merges into an existing user file without clobbering what is there', async () => {
    mkdirSync(join(dir, 'home', '.claude'));
    const mine = {
      model: 'opus',
      permissions: { allow: ['Bash(npm test)'] },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './lint.sh' }] }] },
    };
    writeFileSync(userFile(), JSON.stringify(mine, null, 2));
    await run({ ...where(), ...io(), user: true });
    const written = JSON.parse(readFileSync(userFile(), 'utf8'));
    expect(written.model).toBe('opus');
    expect(written.permissions).toEqual(mine.permissions);
    expect(written.hooks.PreToolUse[0]).toEqual(mine.hooks.PreToolUse[0]);
    expect(written.hooks.PreToolUse[1].hooks[0]).toMatchObject({
      type: 'command',
      command: 'switchboard hook claude-code',
    });
    expect(validSettings(written)).toBe(true);
    // A second run finds everything in place.
    expect((await run({ ...where(), ...io(), user: true })).kind).toBe('unchanged');
  });

  it('writes HTTP hooks into the project file with the key header, and the bridge where HTTP is refused', async () => {
    await run({ ...where(), ...io(), project: true, http: true, url: 'http://127.0.0.1:9999' });
    const written = JSON.parse(readFileSync(projectFile(), 'utf8'));
    expect(validSettings(written), JSON.stringify(validSettings.errors)).toBe(true);
    expect(written.hooks.PreToolUse[0].hooks[0]).toMatchObject({
      type: 'http',
      url: 'http://127.0.0.1:9999/v1/runtimes/claude-code/hooks',
      headers: { Authorization: 'Bearer $SWITCHBOARD_KEY' },
      allowedEnvVars: ['SWITCHBOARD_KEY'],
    });
    expect(written.hooks.SessionStart[0].hooks[0].type).toBe('command');
    expect(readdirTmp()).toEqual([]);
  });

  it('shows only the changed lines when switching an installed file to HTTP', async () => {
    await run({ ...where(), ...io(), project: true });
    out = [];
    await run({ ...where(), ...io(), project: true, http: true, dryRun: true });
    const diff = out.join('');
    expect(diff).toContain('-            "command": "switchboard hook claude-code"');
    expect(diff).toContain('+            "type": "http",');
    expect(diff).not.toContain('/dev/null');
  });

  it('refuses a settings file that is not JSON and leaves it alone', async () => {
    mkdirSync(join(dir, 'repo', '.claude'));
    writeFileSync(projectFile(), '{ "hooks": ');
    await expect(run({ ...where(), ...io() })).rejects.toThrow(/not valid JSON/);
    expect(readFileSync(projectFile(), 'utf8')).toBe('{ "hooks": ');
  });

  it('refuses hooks of the wrong shape and conflicting flags', async () => {
    mkdirSync(join(dir, 'repo', '.claude'));
    writeFileSync(projectFile(), JSON.stringify({ hooks: [] }));
    await expect(run({ ...where(), ...io() })).rejects.toThrow(/"hooks" is not an object/);
    await expect(run({ ...where(), ...io(), user: true, project: true })).rejects.toThrow(/choose one scope/);
    await expect(run({ ...where(), ...io(), http: true, command: true })).rejects.toThrow(
      /choose one transport/,
    );
    await expect(run({ ...where(), ...io(), timeout: 'soon' })).rejects.toThrow(/--timeout/);
  });
});

function readdirTmp(): string[] {
  const d = join(dir, 'repo', '.claude');
  return existsSync(d) ? readdirSync(d).filter((f) => f.endsWith('.tmp')) : [];
}

describe('unifiedDiff', () => {
  it('is empty for equal texts and marks one changed line with its context', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', 'f', true)).toBe('');
    const text = ['1', '2', '3', '4', '5', '6', '7', '8', '9'];
    const changed = [...text];
    changed[4] = 'five';
    expect(unifiedDiff(`${text.join('\n')}\n`, `${changed.join('\n')}\n`, 'f', true)).toBe(
      '--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n',
    );
  });
});

describe('switchboard runtimes', () => {
  it('prints the capability table, and JSON rows with --json', () => {
    const lines: string[] = [];
    runtimes({}, (s) => {
      lines.push(s);
    });
    expect(lines.join('')).toMatch(/^RUNTIME\s+EVENT\s+CAPABILITY\s+ENVELOPE TYPE/);
    expect(lines.join('')).toMatch(/codex\s+PreToolUse\s+can_block\s+agent\.tool\.requested/);
    const json: string[] = [];
    runtimes({ json: true }, (s) => {
      json.push(s);
    });
    expect(JSON.parse(json.join('')).runtimes.length).toBeGreaterThan(50);
  });
});
