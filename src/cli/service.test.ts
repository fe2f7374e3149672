import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { install, launchdPlist, serviceSpec, status, systemdUnit, uninstall } from './service.js';

const dir = mkdtempSync(join(tmpdir(), 'sb service-%-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const gateway = join(dir, 'my gateway');
mkdirSync(gateway);
writeFileSync(join(gateway, 'switchboard.yaml'), 'auth: { keys: [] }\n');
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', USER: 'me' };

/** systemd's own checker, when this machine has it; otherwise say so and check the text only. */
const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('switchboard service', () => {
  const spec = serviceSpec(gateway, env);

  it('writes a systemd user unit for serve in the gateway folder, with its config, that systemd-analyze verify accepts', () => {
    const unit = systemdUnit(spec);
    expect(unit).toContain(`WorkingDirectory=${gateway.replace(/%/g, '%%')}\n`);
    expect(unit).toContain(
      `Environment="SWITCHBOARD_CONFIG=${join(gateway, 'switchboard.yaml').replace(/%/g, '%%')}"`,
    );
    expect(unit).toMatch(/^ExecStart=\S+ \S+main\.js serve$/m);
    expect(unit).toContain('Restart=on-failure');
    expect(unit).toContain('WantedBy=default.target');
    if (!hasSystemdAnalyze) {
      console.warn('systemd-analyze not found: the unit was checked as text only');
      return;
    }
    // System mode: --user needs a user manager, which a CI container does not run.
    const clean = mkdtempSync(join(tmpdir(), 'sb-unit-'));
    const file = join(clean, 'switchboard.service');
    writeFileSync(file, unit);
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    rmSync(clean, { recursive: true, force: true });
    const said = `${r.stdout}${r.stderr}`;
    if (/Failed to initialize manager/.test(said)) {
      console.warn(`systemd-analyze cannot run here (${said.trim()}): the unit was checked as text only`);
      return;
    }
    expect(
      said.split('\n').filter((l) => l.includes('switchboard.service')),
      said,
    ).toEqual([]);
    expect(r.status, said).toBe(0);
  });

  it('writes a launchd agent whose plist names the same program, folder and config', () => {
    const plist = launchdPlist(spec);
    expect(plist).toContain('<key>Label</key><string>dev.switchboard.gateway</string>');
    expect(plist).toContain(`<key>WorkingDirectory</key><string>${gateway}</string>`);
    expect(plist).toContain('<string>serve</string>');
    expect(plist).toContain('<key>RunAtLoad</key><true/>');
  });

  it('installs, reports and uninstalls through systemctl --user, and refuses a folder with no config', () => {
    const home = join(dir, 'home');
    const calls: string[] = [];
    const lines: string[] = [];
    const run = (cmd: string, args: string[]) => {
      calls.push(`${cmd} ${args.join(' ')}`);
      return { status: 0, stdout: args.includes('is-active') ? 'active\n' : '', stderr: '' };
    };
    const o = { platform: 'linux' as const, home, cwd: gateway, env, run, out: (l: string) => lines.push(l) };
    install(o);
    const file = join(home, '.config', 'systemd', 'user', 'switchboard.service');
    expect(readFileSync(file, 'utf8')).toBe(systemdUnit(spec));
    expect(calls).toEqual([
      'systemctl --user daemon-reload',
      'systemctl --user enable --now switchboard.service',
    ]);
    expect(lines.join('\n')).toContain('loginctl enable-linger me');
    status(o);
    expect(lines.at(-1)).toBe(`installed (${file}): active`);
    uninstall(o);
    expect(calls.slice(-2)).toEqual([
      'systemctl --user disable --now switchboard.service',
      'systemctl --user daemon-reload',
    ]);
    status(o);
    expect(lines.at(-1)).toMatch(/^not installed/);
    expect(() => install({ ...o, cwd: dir })).toThrow(/no switchboard\.yaml in .*switchboard init/);
  });
});
