import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLE_CONFIG } from '../config/example.js';
import { loadConfig } from '../server/config.js';
import { unifiedDiff } from './diff.js';
import { run as runtimes } from './runtimes.js';
import { run } from './setup.js';
import { routesSchema } from '../notify/config.js';

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
// `env: {}`: never the test runner's XDG_CONFIG_HOME, so hook.json stays under the temporary home.
const where = () => ({ cwd: join(dir, 'repo'), home: join(dir, 'home'), env: {} });

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

describe('switchboard setup claude-code --notify', () => {
  const TOPIC = 'sb-7d1e0c94b2a6f3e85c10';
  const NTFY = `https://ntfy.sh/${TOPIC}`;
  const configFile = () => join(dir, 'repo', 'switchboard.yaml');
  const mcpFile = () => join(dir, 'repo', '.mcp.json');
  const claudeJson = () => join(dir, 'home', '.claude.json');
  const mcpSchema = ajv.compile({
    type: 'object',
    required: ['mcpServers'],
    properties: {
      mcpServers: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          required: ['command'],
          properties: {
            type: { const: 'stdio' },
            command: { type: 'string', minLength: 1 },
            args: { type: 'array', items: { type: 'string' } },
            env: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
      },
    },
  });
  const read = (p: string) => readFileSync(p, 'utf8');
  const snapshot = () =>
    [configFile(), mcpFile(), projectFile(), claudeJson()].map((p) => (existsSync(p) ? read(p) : undefined));

  beforeEach(() => {
    writeFileSync(configFile(), EXAMPLE_CONFIG, { mode: 0o600 });
  });

  it("writes the hooks, the MCP server and a starter route, keeping everyone else's entries", async () => {
    mkdirSync(join(dir, 'repo', '.claude'));
    const settings = { hooks: { Stop: [{ hooks: [{ type: 'command', command: './notify.sh' }] }] } };
    writeFileSync(projectFile(), JSON.stringify(settings, null, 2));
    const mcp = { mcpServers: { github: { command: 'npx', args: ['-y', 'gh-mcp'], env: { T: `\${GH}` } } } };
    writeFileSync(mcpFile(), JSON.stringify(mcp, null, 2));
    const env = { SWITCHBOARD_KEY: 'agent-key-value-0123456789' };
    const outcome = await run({ ...where(), ...io(), env, notify: NTFY });
    expect(outcome.kind).toBe('written');
    expect(outcome.files.map((f) => [f.role, f.kind])).toEqual([
      ['config', 'written'],
      ['settings', 'written'],
      ['hook', 'written'],
      ['mcp', 'written'],
    ]);

    const written = JSON.parse(read(projectFile()));
    expect(validSettings(written)).toBe(true);
    expect(written.hooks.Stop[0]).toEqual(settings.hooks.Stop[0]);
    for (const event of ['PreToolUse', 'PermissionRequest', 'Notification', 'Stop']) {
      expect(JSON.stringify(written.hooks[event]), event).toContain('switchboard hook claude-code');
    }

    const servers = JSON.parse(read(mcpFile()));
    expect(mcpSchema(servers), JSON.stringify(mcpSchema.errors)).toBe(true);
    expect(servers.mcpServers.github).toEqual(mcp.mcpServers.github);
    expect(servers.mcpServers.switchboard).toEqual({
      command: 'switchboard',
      args: ['mcp'],
      env: { SWITCHBOARD_URL: 'http://127.0.0.1:8787', SWITCHBOARD_KEY: `\${SWITCHBOARD_KEY}` },
    });

    // The config loads as `serve` loads it, module checks included, and still has init's comments.
    const text = read(configFile());
    expect(text).toContain('# Where notifications go. Recipients live here only, never in a tool call.');
    const { config } = loadConfig({ path: configFile(), env: {} });
    expect(config.channels.phone).toEqual({ type: 'ntfy', url: 'https://ntfy.sh', topic: TOPIC });
    // The loaded config holds routes as notify's schema parsed them (defaults filled in).
    expect(config.routes).toEqual(
      routesSchema.parse([
        { match: 'agent == "laptop-agent" || agent.startsWith("laptop-agent:")', channels: ['phone'] },
      ]),
    );
    expect(statSync(configFile()).mode & 0o777).toBe(0o600);

    // No secret in any file; buttons need public_url, and the user is told so.
    for (const p of [configFile(), mcpFile(), projectFile()])
      expect(read(p)).not.toContain(env.SWITCHBOARD_KEY);
    expect(err.join('')).toMatch(/warning: server\.public_url is not set/);
    expect(out.join('')).toMatch(
      /switchboard\.yaml: added channel phone .*, a route for laptop-agent to phone/,
    );
    expect(out.join('')).toMatch(/\.mcp\.json: added the MCP server "switchboard"/);
  });

  it('touches neither the config nor an MCP file without --notify', async () => {
    const outcome = await run({ ...where(), ...io() });
    expect(outcome.files.map((f) => f.role)).toEqual(['settings', 'hook']);
    expect(read(configFile())).toBe(EXAMPLE_CONFIG);
    expect(existsSync(mcpFile())).toBe(false);
    expect(existsSync(claudeJson())).toBe(false);
  });

  it('changes nothing the second time', async () => {
    await run({ ...where(), ...io(), notify: NTFY, publicUrl: 'http://laptop.tailnet:8787' });
    const first = snapshot();
    out = [];
    err = [];
    const again = await run({ ...where(), ...io(), notify: NTFY, publicUrl: 'http://laptop.tailnet:8787' });
    expect(again.kind).toBe('unchanged');
    expect(again.files.every((f) => f.kind === 'unchanged')).toBe(true);
    expect(snapshot()).toEqual(first);
    expect(err.join('')).toBe('');
    // The channel by its name is the same request.
    expect((await run({ ...where(), ...io(), notify: 'phone' })).kind).toBe('unchanged');
    expect(snapshot()).toEqual(first);
  });

  it('prints the diff of every file with --dry-run and writes nothing', async () => {
    const before = snapshot();
    const outcome = await run({ ...where(), ...io(), notify: NTFY, dryRun: true });
    expect(outcome.kind).toBe('dry-run');
    expect(snapshot()).toEqual(before);
    const diff = out.join('');
    expect(diff).toContain('--- a/switchboard.yaml\n+++ b/switchboard.yaml\n');
    expect(diff).toContain('-channels: {}\n+channels:\n');
    expect(diff).toContain(`+  phone: { type: ntfy, url: 'https://ntfy.sh', topic: ${TOPIC} }\n`);
    expect(diff).toContain('--- /dev/null\n+++ b/.claude/settings.json\n');
    expect(diff).toContain('--- /dev/null\n+++ b/.mcp.json\n');
    expect(diff).toContain('+      "args": [\n+        "mcp"\n');
    expect(readdirTmp()).toEqual([]);
  });

  it("writes a local-scope server under the project in ~/.claude.json, without the key, keeping the file's keys and mode", async () => {
    const mine = { numStartups: 7, projects: { '/elsewhere': { mcpServers: { x: { command: 'x' } } } } };
    writeFileSync(claudeJson(), JSON.stringify(mine, null, 2), { mode: 0o600 });
    await run({ ...where(), ...io(), local: true, notify: NTFY, url: 'http://127.0.0.1:9999' });
    const written = JSON.parse(read(claudeJson()));
    expect(written.numStartups).toBe(7);
    expect(written.projects['/elsewhere']).toEqual(mine.projects['/elsewhere']);
    expect(written.projects[join(dir, 'repo')].mcpServers.switchboard).toEqual({
      command: 'switchboard',
      args: ['mcp'],
      env: {
        SWITCHBOARD_URL: 'http://127.0.0.1:9999',
        SWITCHBOARD_KEY_FILE: join(dir, 'repo', '.switchboard', 'keys', 'laptop-agent.key'),
      },
    });
    expect(statSync(claudeJson()).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir, 'repo', '.claude', 'settings.local.json'))).toBe(true);
    expect(existsSync(mcpFile())).toBe(false);
  });

  it('writes a user-scope server at the top of ~/.claude.json, run as the custom bridge runs', async () => {
    await run({
      ...where(),
      ...io(),
      user: true,
      notify: NTFY,
      bridge: 'node /opt/sb/dist/cli/main.js hook claude-code',
    });
    expect(JSON.parse(read(claudeJson())).mcpServers.switchboard).toMatchObject({
      command: 'node',
      args: ['/opt/sb/dist/cli/main.js', 'mcp'],
    });
  });

  it('finds the agent key init generated: hook.json names its file, the user MCP server too, and no key is written', async () => {
    const keyFile = join(dir, 'repo', '.switchboard', 'keys', 'laptop-agent.key');
    await run({ ...where(), ...io(), user: true, notify: NTFY });
    const hookJson = join(dir, 'home', '.config', 'switchboard', 'hook.json');
    expect(JSON.parse(read(hookJson))).toEqual({ key_file: keyFile });
    expect(statSync(hookJson).mode & 0o777).toBe(0o600);
    expect(JSON.parse(read(claudeJson())).mcpServers.switchboard.env).toEqual({
      SWITCHBOARD_URL: 'http://127.0.0.1:8787',
      SWITCHBOARD_KEY_FILE: keyFile,
    });
    expect(out.join('')).toContain('the bridge finds key laptop-agent here (key_file)');
    expect(err.join('')).not.toContain('SWITCHBOARD_KEY');
  });

  it('makes up an unguessable topic when --notify names only the server, prints it, and keeps it on a second run', async () => {
    await run({ ...where(), ...io(), notify: 'https://ntfy.sh/' });
    const topic = /ntfy app: \+ → topic (sb-[0-9a-f]{24}), server https:\/\/ntfy\.sh/.exec(out.join(''))?.[1];
    expect(topic, out.join('')).toBeDefined();
    const { config } = loadConfig({ path: configFile(), env: {} });
    expect(config.channels.phone).toEqual({ type: 'ntfy', url: 'https://ntfy.sh', topic });
    const first = snapshot();
    out = [];
    expect((await run({ ...where(), ...io(), notify: 'https://ntfy.sh' })).kind).toBe('unchanged');
    expect(snapshot()).toEqual(first);
    expect(out.join('')).toContain(`topic ${topic},`);
  });

  it('refuses a plain-HTTP ntfy unless --allow-plain-http, which adds its host to egress.allow', async () => {
    const before = snapshot();
    await expect(
      run({ ...where(), ...io(), notify: 'http://192.168.1.5/agents-topic-0123456789' }),
    ).rejects.toThrow(
      /plain HTTP, which the egress guard refuses .*pass --allow-plain-http to add "192\.168\.1\.5" to egress\.allow/,
    );
    expect(snapshot()).toEqual(before);
    await run({
      ...where(),
      ...io(),
      notify: 'http://192.168.1.5/agents-topic-0123456789',
      allowPlainHttp: true,
    });
    const { config } = loadConfig({ path: configFile(), env: {} });
    expect(config.egress.allow).toEqual(['192.168.1.5']);
    expect(out.join('')).toContain('egress.allow "192.168.1.5" (plain HTTP on purpose)');
    // The guard now lets the channel through.
    const { channelVerdicts } = await import('./startup.js');
    expect(channelVerdicts(config, {})).toEqual([
      { channel: 'phone', type: 'ntfy', verdict: 'egress ok', refused: false },
    ]);
  });

  it('uses the config SWITCHBOARD_CONFIG names, as serve does', async () => {
    const other = join(dir, 'elsewhere.yaml');
    writeFileSync(other, EXAMPLE_CONFIG);
    await run({ ...where(), ...io(), env: { SWITCHBOARD_CONFIG: other }, notify: NTFY });
    expect(read(other)).toContain(TOPIC);
    expect(read(configFile())).toBe(EXAMPLE_CONFIG);
  });

  it('refuses an unknown channel, a bad URL, a name clash and a missing config, and leaves every file alone', async () => {
    const clash = EXAMPLE_CONFIG.replace(
      'channels: {}',
      'channels:\n  phone: { type: webhook, url: "https://example.com/hook", secret_env: HOOK_SECRET }',
    );
    writeFileSync(configFile(), clash);
    const before = snapshot();
    await expect(run({ ...where(), ...io(), notify: 'pager' })).rejects.toThrow(
      /no channel named "pager" under channels: \(there are: phone\); add it there/,
    );
    await expect(run({ ...where(), ...io(), notify: 'ftp://ntfy.sh/x' })).rejects.toThrow(/http\(s\) URL/);
    await expect(run({ ...where(), ...io(), notify: NTFY })).rejects.toThrow(
      /channels\.phone already exists.*--channel-name <another name>/,
    );
    await expect(run({ ...where(), ...io(), notify: 'phone', publicUrl: 'nope' })).rejects.toThrow(
      /--public-url/,
    );
    expect(snapshot()).toEqual(before);
    rmSync(configFile());
    await expect(run({ ...where(), ...io(), notify: NTFY })).rejects.toThrow(/run `switchboard init` first/);
    await expect(run({ ...where(), ...io(), publicUrl: 'https://x.example' })).rejects.toThrow(
      /--public-url only apply with --notify/,
    );
    expect(existsSync(projectFile())).toBe(false);
    expect(existsSync(mcpFile())).toBe(false);
  });

  it('adds the topic under --channel-name beside a clashing channel', async () => {
    writeFileSync(
      configFile(),
      EXAMPLE_CONFIG.replace(
        'channels: {}',
        'channels:\n  phone: { type: ntfy, url: "https://ntfy.sh", topic: other-topic-0123456789 }',
      ),
    );
    await run({ ...where(), ...io(), notify: NTFY, channelName: 'pocket' });
    const { config } = loadConfig({ path: configFile(), env: {} });
    expect(Object.keys(config.channels)).toEqual(['phone', 'pocket']);
    expect(config.routes[0]).toMatchObject({ channels: ['pocket'] });
  });

  it('refuses to write a config that would not load, naming the problem', async () => {
    writeFileSync(configFile(), `${EXAMPLE_CONFIG}\nnotify:\n  rate_per_minute: -1\n`);
    const before = snapshot();
    await expect(run({ ...where(), ...io(), notify: NTFY })).rejects.toThrow(
      /would not load after this change.*\n\s+notify\.rate_per_minute/,
    );
    expect(snapshot()).toEqual(before);
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
