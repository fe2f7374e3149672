import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild } from '../../src/cli/testing.js';
import { markChannelRevoked } from '../../src/delivery/engine/sql.js';
import { appMigrations } from '../../src/server/modules.js';
import { migrate } from '../../src/store/migrate.js';
import { SqliteDb } from '../../src/store/sqlite.js';

const dirs: string[] = [];
function workdir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sb-cli-'));
  dirs.push(d);
  return d;
}
function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH!, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('switchboard CLI', () => {
  beforeAll(requireBuild);
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('has --help on every command', () => {
    const cwd = workdir();
    for (const args of [
      [],
      ['serve'],
      ['init'],
      ['keys', 'list'],
      ['config', 'schema'],
      ['service', 'install'],
      ['service', 'status'],
      ['keys', 'show'],
      ['keys', 'rotate'],
      ['doctor'],
      ['audit', 'verify'],
      ['events', 'tail'],
      ['hook'],
      ['runtimes'],
      ['setup', 'claude-code'],
      ['setup', 'codex'],
      ['mcp'],
      ['notify'],
      ['approvals', 'list'],
      ['policy', 'lint'],
      ['policy', 'test'],
      ['incidents', 'freeze'],
      ['dlq', 'list'],
      ['ingress', 'replay'],
      ['away'],
    ]) {
      const r = cli([...args, '--help'], cwd);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toContain('Usage: switchboard');
    }
  });

  it('writes a config with init whose keys are generated into owner-only files, that doctor accepts with nothing exported', () => {
    const cwd = workdir();
    const init = cli(['init'], cwd);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('generated keys laptop-agent, me, ops in .switchboard/keys/');
    const keyDir = join(cwd, '.switchboard', 'keys');
    expect(statSync(keyDir).mode & 0o777).toBe(0o700);
    const secrets = ['laptop-agent', 'me', 'ops'].map((name) => {
      const file = join(keyDir, `${name}.key`);
      expect(statSync(file).mode & 0o777, name).toBe(0o600);
      return readFileSync(file, 'utf8').trim();
    });
    expect(new Set(secrets).size).toBe(3);
    for (const s of secrets) expect(s).toMatch(/^sb_[A-Za-z0-9_-]{43}$/);
    expect(cli(['init'], cwd)).toMatchObject({ code: 1, stderr: expect.stringContaining('--force') });
    expect(cli(['init', '--if-missing'], cwd)).toMatchObject({ code: 0, stdout: '' });

    const r = cli(['doctor'], cwd);
    expect(r.stdout).toContain(`ok    store: none yet at ${join(cwd, '.switchboard', 'switchboard.db')}`);
    expect(r.stdout).toContain('ok    key me (approver) from ./.switchboard/keys/me.key');
    expect(r.code).toBe(0);

    const list = cli(['keys', 'list'], cwd);
    expect(list.stdout).toMatch(/^me\s+approver\s+file .*\/\.switchboard\/keys\/me\.key$/m);
    for (const s of secrets) expect(list.stdout).not.toContain(s);
    expect(cli(['keys', 'show', 'me'], cwd).stdout).toBe(`${secrets[1]}\n`);
    expect(cli(['keys', 'rotate', 'me'], cwd).code).toBe(0);
    const rotated = cli(['keys', 'show', 'me'], cwd).stdout.trim();
    expect(rotated).toMatch(/^sb_/);
    expect(rotated).not.toBe(secrets[1]);
    expect(cli(['keys', 'show', 'nobody'], cwd)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no key named nobody'),
    });
    // --force rewrites the config but keeps the keys: rotating is never a side effect.
    expect(cli(['init', '--force'], cwd).code).toBe(0);
    expect(cli(['keys', 'show', 'me'], cwd).stdout.trim()).toBe(rotated);

    rmSync(join(keyDir, 'ops.key'));
    const missing = cli(['doctor'], cwd);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('key file ./.switchboard/keys/ops.key is missing or empty');
  }, 120_000);

  it('prints the config JSON Schema, and init points the YAML language server at a copy of it', () => {
    const cwd = workdir();
    const printed = cli(['config', 'schema'], cwd);
    expect(printed.code).toBe(0);
    const schema = JSON.parse(printed.stdout);
    expect(schema.title).toBe('switchboard.yaml');
    expect(cli(['init'], cwd).code).toBe(0);
    const yaml = readFileSync(join(cwd, 'switchboard.yaml'), 'utf8');
    expect(yaml.split('\n')[0]).toBe(
      '# yaml-language-server: $schema=./.switchboard/switchboard.schema.json',
    );
    expect(JSON.parse(readFileSync(join(cwd, '.switchboard', 'switchboard.schema.json'), 'utf8'))).toEqual(
      schema,
    );
  });

  it('fails doctor on a channel URL the egress guard refuses, url_env values included, without printing it', () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      // Refused before any lookup: the test resolves no name.
      'channels:\n  chat: { type: discord, url_env: CHAT_URL }\n',
    );
    const r = cli(['doctor'], cwd, { CHAT_URL: 'file:///etc/passwd' });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL {2}channels\.chat\.url_env \(\$CHAT_URL\): refused by the egress guard \(scheme/,
    );
    expect(r.stdout).not.toContain('/etc/passwd');
    const userinfo =
      'channels:\n  hook: { type: webhook, url: "https://u:pw@hooks.example.com/x", secret_env: S }\n';
    writeFileSync(join(cwd, 'switchboard.yaml'), userinfo);
    const bad = cli(['doctor'], cwd);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('channels.hook.url: must not carry user info');
  });

  it('fails doctor on a channel the provider refused the credential of, naming the fix, without the secret', async () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      'channels:\n  team: { type: slack, token_env: SLACK_BOT, channel: C1 }\n',
    );
    const db = new SqliteDb({ path: join(cwd, '.switchboard', 'switchboard.db') });
    try {
      await migrate(db, appMigrations());
      await db.query(
        markChannelRevoked({
          destination: 'team',
          channelType: 'slack',
          reason: 'slack: token_revoked',
          fingerprint: 'f'.repeat(32),
          since: Date.parse('2026-12-01T10:00:00Z'),
          eventId: 'evt_revoked',
        }),
      );
    } finally {
      await db.close();
    }
    const r = cli(['doctor'], cwd, { SLACK_BOT: 'xoxb-secret-token' });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}channel team is revoked since 2026-12-01T10:00:00.000Z \(slack: token_revoked\): replace its credential in channels\.team/m,
    );
    expect(r.stdout + r.stderr).not.toContain('xoxb-secret-token');
  });

  it('stops on an invalid config with one line per problem naming the key', () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      'server:\n  prot: 1\nauth:\n  keys:\n    - { name: x, role: boss, key_env: X }\n',
    );
    const r = cli(['serve'], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('server.prot: unknown key');
    expect(r.stderr).toContain('auth.keys[0].role: must be one of');
  });

  it('exits non-zero with a clear line when PostgreSQL is unreachable at start', () => {
    const r = cli(['serve', '--allow-no-keys'], workdir(), {
      SWITCHBOARD_DATABASE_URL: 'postgres://nobody:pw@127.0.0.1:1/none',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^switchboard: The store is unreachable.*ECONNREFUSED/m);
    expect(r.stderr).not.toContain(':pw@');
  });

  it('passes audit verify on a fresh log and names the event after a row is edited', async () => {
    const cwd = workdir();
    const { SqliteDb } = await import('../../src/store/sqlite.js');
    const { migrate } = await import('../../src/store/migrate.js');
    const { EventLog } = await import('../../src/log/log.js');
    const db = new SqliteDb({ path: join(cwd, '.switchboard', 'switchboard.db') });
    const { appMigrations } = await import('../../src/server/modules.js');
    await migrate(db, appMigrations());
    const log = new EventLog(db, { tenant_id: 't', environment: 'e' });
    const events = [];
    for (let i = 0; i < 5; i++)
      events.push(await log.append({ type: 'agent.tool.requested', subject: { tool: `t${i}` } }));
    expect(cli(['audit', 'verify'], cwd)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('ok: 5 events'),
    });
    await db.query({ text: `UPDATE events SET body = replace(body, '"t2"', '"rm"') WHERE seq = 3` });
    await db.close();
    const r = cli(['audit', 'verify'], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`event #3 (${events[2]!.event_id})`);
    const tail = cli(['events', 'tail', '-n', '2', '--json'], cwd);
    expect(
      tail.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).seq),
    ).toEqual([4, 5]);
  });

  it('never creates a store from a command that reads: events tail, audit verify and doctor say where they looked', () => {
    const cwd = workdir();
    for (const args of [
      ['events', 'tail'],
      ['audit', 'verify'],
    ]) {
      const r = cli(args, cwd);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(
        `no store at ${join(cwd, '.switchboard', 'switchboard.db')} (config: built-in defaults)`,
      );
      expect(r.stderr).toContain('SWITCHBOARD_DATA_DIR');
      expect(r.stdout).not.toContain('chain intact');
    }
    cli(['doctor'], cwd);
    expect(existsSync(join(cwd, '.switchboard'))).toBe(false);
  });

  it('fails doctor and stops serve on a rule that does not compile, with the lint lines', () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      [
        'auth:',
        '  keys:',
        '    - { name: ops, role: admin, key_env: SB_ADMIN_KEY }',
        'rules:',
        `  - { id: broken, when: 'tool == ', decision: deny, reason_code: NEVER }`,
        '',
      ].join('\n'),
    );
    const env = { SB_ADMIN_KEY: 'c'.repeat(24) };
    const doctor = cli(['doctor'], cwd, env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^FAIL {2}policy: \S*switchboard\.yaml:5:\d+ rule broken: when: /m);
    const serve = cli(['serve', '--port', '0'], cwd, env);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('the policy does not compile');
    expect(serve.stderr).toMatch(/switchboard\.yaml:5:\d+ rule broken: when: /);
  });

  it('says another gateway holds the port, and how to use --port, instead of a raw EADDRINUSE', async () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      'auth:\n  keys:\n    - { name: ops, role: admin, key: "cccccccccccccccccccccccc" }\n',
    );
    const first = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
      cwd,
      env: { PATH: process.env.PATH! },
    });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        let out = '';
        first.stdout.on('data', (d) => {
          out += d;
          const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(out);
          if (m) resolve(m[1]!);
        });
        first.on('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      const other = workdir();
      writeFileSync(
        join(other, 'switchboard.yaml'),
        'auth:\n  keys:\n    - { name: ops, role: admin, key: "cccccccccccccccccccccccc" }\n',
      );
      const r = cli(['serve', '--port', port], other);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `port ${port} on 127.0.0.1 is in use: another Switchboard gateway is running there (/readyz: ready)`,
      );
      expect(r.stderr).toContain('--port <n>');
      expect(r.stderr).not.toContain('EADDRINUSE');
    } finally {
      first.kill('SIGTERM');
    }
  }, 60_000);

  it('refuses to serve with no usable key, saying how to get one', () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      'auth:\n  keys:\n    - { name: laptop-agent, role: agent, key_env: SB_AGENT_KEY }\n',
    );
    const r = cli(['serve', '--port', '0'], cwd);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'no usable API key (named but unset: laptop-agent ($SB_AGENT_KEY is not set))',
    );
    expect(r.stderr).toContain('switchboard init');
    expect(r.stderr).toContain('--allow-no-keys');
  });

  it('serves with a start-up summary, then drains and exits 0 on SIGTERM', async () => {
    const cwd = workdir();
    writeFileSync(
      join(cwd, 'switchboard.yaml'),
      [
        'auth:',
        '  keys:',
        '    - { name: laptop-agent, role: agent, key_env: SB_AGENT_KEY }',
        '    - { name: me, role: approver, key_env: SB_APPROVER_KEY }',
        'channels:',
        '  phone: { type: ntfy, url: "http://192.168.1.5", topic: t }',
        '  hook: { type: webhook, url: "https://example.com/hook", secret_env: HOOK_SECRET }',
        'sources:',
        '  github: { type: github, secret_env: GH_SECRET }',
        '',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
      cwd,
      env: {
        PATH: process.env.PATH!,
        SWITCHBOARD_LOG_LEVEL: 'info',
        SB_AGENT_KEY: 'a'.repeat(24),
        GH_SECRET: 'g'.repeat(24),
      },
    });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/[^"]+)"/.exec(out) ?? /"url":"(http:\/\/[^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    for (let i = 0; i < 200 && !err.includes('triggers'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toContain(`listening  ${url}`);
    expect(err).toContain(
      'keys       1 agent (laptop-agent), 0 approver, 0 admin; unset: me ($SB_APPROVER_KEY is not set)',
    );
    expect(err).toMatch(
      /channels {3}phone \(ntfy, refused by egress \(https_required: .*\)\), hook \(webhook, egress ok\)/,
    );
    expect(err).toContain('sources    github → POST /v1/ingress/github');
    expect(err).toContain('triggers   none');
    expect(err).toContain(
      'WARNING: channel phone will never deliver: refused by egress (https_required: plain http to 192.168.1.5 needs the host in egress.allow); every message to it is recorded blocked. Fix: use its https:// address, or if this host is yours (a LAN or loopback server) add "192.168.1.5" to egress.allow',
    );
    expect(err).not.toMatch(/WARNING: channel hook/);
    expect(err).not.toContain('a'.repeat(24));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
