import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NtfyStandIn, ntfyStandIn } from '../../src/channels/ntfy/testing.js';
import { CLI, ROOT } from '../../src/cli/testing.js';

/**
 * README "Five minutes: your phone buzzes, you tap approve", run as written in a fresh HOME: the shell
 * block is read out of the README, and only what cannot exist here is swapped — ntfy.sh for a local ntfy
 * stand-in (plain HTTP on loopback, so egress must allow 127.0.0.1), the LAN address for 127.0.0.1,
 * `npm install && npm link` for a `switchboard` on PATH that runs this build, and `claude` for a stand-in
 * that runs the hooks settings.json names exactly as Claude Code does (JSON on stdin, the answer on
 * stdout). The stand-in phone taps Approve the way the ntfy app does: the action's HTTP request.
 */

const PORT = 8787;

/** The local ntfy, and a phone that taps Approve the way the ntfy app does: the action's own request. */
async function ntfyAndPhone(): Promise<NtfyStandIn & { taps: number[] }> {
  const taps: number[] = [];
  const ntfy = await ntfyStandIn((p) => {
    const approve = p.actions?.find((a) => a.action === 'http' && /approve/i.test(a.label));
    if (!approve?.url) return;
    // The person reads the prompt, then taps.
    setTimeout(() => {
      void fetch(approve.url!, {
        method: approve.method ?? 'POST',
        headers: approve.headers ?? {},
        ...(approve.body !== undefined ? { body: approve.body } : {}),
      }).then((r) => taps.push(r.status));
    }, 200);
  });
  return Object.assign(ntfy, { taps });
}

/** Claude Code's hook runner, as far as the guide needs it: command hooks, matched by tool name. */
const FAKE_CLAUDE = `#!/usr/bin/env node
const { readFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const { join, basename } = require('node:path');
const settings = JSON.parse(readFileSync(join(process.env.HOME, '.claude', 'settings.json'), 'utf8'));
function run(event, payload) {
  const out = [];
  for (const group of settings.hooks[event] ?? []) {
    const m = group.matcher;
    if (m && m !== '*' && payload.tool_name !== undefined && !new RegExp('^(' + m + ')$').test(payload.tool_name)) continue;
    for (const h of group.hooks) {
      if (h.type !== 'command') throw new Error('the guide writes command hooks; got ' + h.type);
      const r = spawnSync('sh', ['-c', h.command], {
        input: JSON.stringify(payload),
        env: process.env,
        timeout: (h.timeout ?? 600) * 1000,
        encoding: 'utf8',
      });
      out.push({ code: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() });
    }
  }
  return out;
}
const base = { session_id: 'guide-session-1', transcript_path: '/tmp/t.jsonl', cwd: process.cwd(), permission_mode: 'default' };
const permission = run('PermissionRequest', { ...base, hook_event_name: 'PermissionRequest', tool_name: 'Bash',
  tool_input: { command: 'npm publish', description: 'Publish the package' } });
console.log('PERMISSION ' + JSON.stringify(permission));
const stop = run('Stop', { ...base, hook_event_name: 'Stop', stop_hook_active: false,
  last_assistant_message: 'Published ' + basename(process.cwd()) + ' 1.2.3.' });
console.log('STOP ' + JSON.stringify(stop));
`;

function guideScript(ntfyUrl: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Five minutes'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README: no sh block under "## Five minutes"');
  const swaps: [RegExp | string, string][] = [
    [/^npm install && npm link.*$/m, '# npm install && npm link: `switchboard` on PATH runs this build'],
    // The stand-in is plain HTTP on loopback: what --allow-plain-http is for (ntfy.sh is https).
    ['--notify https://ntfy.sh ', `--notify ${ntfyUrl} --allow-plain-http `],
    ['http://192.168.1.20:8787', `http://127.0.0.1:${PORT}`],
  ];
  let script = block;
  for (const [from, to] of swaps) {
    const next = script.replace(from, to);
    if (next === script) throw new Error(`README guide changed: ${String(from)} is no longer in it`);
    script = next;
  }
  if (/openssl rand|export SB_|SWITCHBOARD_KEY=/.test(script))
    throw new Error('README guide: keys come from switchboard init, never from the shell');
  return `set -euo pipefail\n${script}`;
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

describe('the README five-minute guide', () => {
  let home: string;
  let phone: Awaited<ReturnType<typeof ntfyAndPhone>>;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sb-guide-'));
    phone = await ntfyAndPhone();
  });
  afterAll(async () => {
    await phone.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('works as written: the phone gets the prompt with buttons, Approve allows it, and a finished turn arrives', async () => {
    if (!(await portFree(PORT))) {
      throw new Error(
        `port ${PORT} is in use: the guide runs the gateway on its default port; stop what listens there`,
      );
    }
    const bin = join(home, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'switchboard'), `#!/bin/sh\nexec node ${JSON.stringify(CLI)} "$@"\n`);
    writeFileSync(join(bin, 'claude'), FAKE_CLAUDE);
    chmodSync(join(bin, 'switchboard'), 0o755);
    chmodSync(join(bin, 'claude'), 0o755);
    const project = join(home, 'code', 'your-project');
    mkdirSync(join(project, '.git'), { recursive: true });
    writeFileSync(join(project, '.git', 'HEAD'), 'ref: refs/heads/release\n');

    const env: NodeJS.ProcessEnv = { PATH: `${bin}:${process.env.PATH}`, HOME: home, LANG: 'C.UTF-8' };
    const child = spawn('bash', ['-c', guideScript(phone.url)], { env, cwd: home, detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    // The guide leaves the gateway running in the background: stop it (same process group).
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    const log = existsSync(join(home, 'switchboard', 'switchboard.log'))
      ? readFileSync(join(home, 'switchboard', 'switchboard.log'), 'utf8')
      : '';
    expect(
      code,
      `guide failed\nstdout:\n${stdout}\nstderr:\n${stderr}\nserve log:\n${log.slice(-3000)}`,
    ).toBe(0);

    // Claude Code's PermissionRequest hook answered allow, because the phone tapped Approve.
    const permission = JSON.parse(/^PERMISSION (.*)$/m.exec(stdout)![1]!) as {
      code: number;
      stdout: string;
    }[];
    expect(permission).toHaveLength(1);
    expect(permission[0]!.code).toBe(0);
    expect(JSON.parse(permission[0]!.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    expect(phone.taps).toEqual([200]);

    // What the phone showed: the prompt with the command, where it runs, and the buttons.
    const prompt = phone.published.find((p) => p.actions?.some((a) => /approve/i.test(a.label)));
    // On the topic setup made up and printed for the phone to subscribe to.
    const topic = /ntfy app: \+ → topic (sb-[0-9a-f]{24}),/.exec(stdout)?.[1];
    expect(topic, stdout).toBeDefined();
    expect(prompt?.topic).toBe(topic);
    expect(prompt?.message).toContain('Bash: npm publish');
    expect(prompt?.message).toContain('project: your-project');
    expect(prompt?.message).toContain('branch: release');
    expect(prompt?.actions?.map((a) => a.label)).toEqual(expect.arrayContaining(['Approve', 'Reject']));
    for (const a of prompt?.actions ?? [])
      expect(String(a.url).startsWith(`http://127.0.0.1:${PORT}/`)).toBe(true);

    // The finished turn.
    for (
      let i = 0;
      i < 100 && !phone.published.some((p) => p.message?.includes('Published your-project'));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const done = phone.published.find((p) => p.message?.includes('Published your-project 1.2.3.'));
    expect(done?.title).toMatch(/^Done/);
    // Nothing asked twice, nothing else sent.
    expect(phone.published.filter((p) => p.actions?.some((a) => /approve/i.test(a.label)))).toHaveLength(1);
  }, 120_000);
});
