import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configPath } from '../config/load.js';
import { writeAtomically } from './files.js';

/**
 * `switchboard service install|uninstall|status`: the gateway as a per-user service that starts at
 * login (and, with lingering, at boot) and restarts when it dies: a systemd user unit on Linux, a
 * launchd agent on macOS. It runs `serve` in the folder it was installed from, with that folder's
 * config, so relative paths (data_dir, key files) mean what they meant in the shell.
 */

export const UNIT_NAME = 'switchboard.service';
export const LAUNCHD_LABEL = 'dev.switchboard.gateway';

export interface ServiceSpec {
  /** The folder `serve` runs in: the gateway's config, data and keys. */
  workingDirectory: string;
  /** The config file, absolute. */
  config: string;
  /** The node binary and the CLI entry, absolute, so the service does not depend on PATH. */
  node: string;
  cli: string;
  /** PATH for what the gateway launches (trigger commands): the installing shell's. */
  path: string;
}

export function serviceSpec(cwd: string, env: NodeJS.ProcessEnv): ServiceSpec {
  const config = configPath(env, cwd);
  if (!config || !existsSync(config))
    throw new Error(
      `no switchboard.yaml in ${cwd}: run \`switchboard service install\` in the gateway's folder (after \`switchboard init\`), or set SWITCHBOARD_CONFIG`,
    );
  return {
    workingDirectory: cwd,
    config,
    node: process.execPath,
    cli: fileURLToPath(new URL('./main.js', import.meta.url)),
    path: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  };
}

/** systemd quotes for Environment= and ExecStart= (WorkingDirectory= takes the path bare, `%` doubled): a word with spaces or specials in double quotes, `\` and `"` escaped, `%` doubled. */
function sdQuote(s: string): string {
  const escaped = s.replace(/%/g, '%%');
  return /^[A-Za-z0-9_./:@+-]+$/.test(escaped) ? escaped : `"${escaped.replace(/[\\"]/g, '\\$&')}"`;
}

export function systemdUnit(s: ServiceSpec): string {
  return `# Written by \`switchboard service install\`; remove with \`switchboard service uninstall\`.
[Unit]
Description=Switchboard gateway (${s.workingDirectory.replace(/%/g, '%%')})
Documentation=https://github.com/switchboard/switchboard/blob/main/docs/config.md

[Service]
Type=simple
WorkingDirectory=${s.workingDirectory.replace(/%/g, '%%')}
Environment=${sdQuote(`SWITCHBOARD_CONFIG=${s.config}`)}
Environment=${sdQuote(`PATH=${s.path}`)}
ExecStart=${sdQuote(s.node)} ${sdQuote(s.cli)} serve
# serve drains on SIGTERM (server.shutdown_timeout_ms); a config or key problem exits 1 and is retried.
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function launchdPlist(s: ServiceSpec): string {
  const str = (v: string) => `<string>${xml(v)}</string>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>${str(LAUNCHD_LABEL)}
  <key>ProgramArguments</key>
  <array>${str(s.node)}${str(s.cli)}${str('serve')}</array>
  <key>WorkingDirectory</key>${str(s.workingDirectory)}
  <key>EnvironmentVariables</key>
  <dict>
    <key>SWITCHBOARD_CONFIG</key>${str(s.config)}
    <key>PATH</key>${str(s.path)}
  </dict>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>StandardOutPath</key>${str(join(s.workingDirectory, 'switchboard.log'))}
  <key>StandardErrorPath</key>${str(join(s.workingDirectory, 'switchboard.log'))}
</dict>
</plist>
`;
}

type Runner = (cmd: string, args: string[]) => { status: number | null; stdout: string; stderr: string };

const realRun: Runner = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
};

export interface ServiceOptions {
  dryRun?: boolean;
  /** Injected in tests. */
  platform?: NodeJS.Platform;
  home?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  run?: Runner;
  out?: (line: string) => void;
}

function where(o: ServiceOptions) {
  const os = o.platform ?? platform();
  const home = o.home ?? homedir();
  if (os === 'linux')
    return { kind: 'systemd' as const, file: join(home, '.config', 'systemd', 'user', UNIT_NAME) };
  if (os === 'darwin')
    return {
      kind: 'launchd' as const,
      file: join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`),
    };
  throw new Error(`switchboard service supports Linux (systemd) and macOS (launchd), not ${os}`);
}

function must(run: Runner, cmd: string, args: string[]): string {
  const r = run(cmd, args);
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  return r.stdout;
}

export function install(o: ServiceOptions = {}): void {
  const out = o.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const run = o.run ?? realRun;
  const w = where(o);
  const spec = serviceSpec(resolve(o.cwd ?? process.cwd()), o.env ?? process.env);
  const text = w.kind === 'systemd' ? systemdUnit(spec) : launchdPlist(spec);
  if (o.dryRun) {
    out(`# ${w.file}\n${text}`);
    return;
  }
  writeAtomically(w.file, text, 0o644);
  if (w.kind === 'systemd') {
    must(run, 'systemctl', ['--user', 'daemon-reload']);
    must(run, 'systemctl', ['--user', 'enable', '--now', UNIT_NAME]);
    out(`${w.file}: installed and started; it starts at login and restarts on failure`);
    out(
      `to start it at boot without logging in: loginctl enable-linger ${o.env?.USER ?? process.env.USER ?? '$USER'}`,
    );
    out(`logs: journalctl --user -u ${UNIT_NAME} -f`);
  } else {
    const uid = String(process.getuid?.() ?? '');
    run('launchctl', ['bootout', `gui/${uid}/${LAUNCHD_LABEL}`]); // an older copy; absent is fine
    must(run, 'launchctl', ['bootstrap', `gui/${uid}`, w.file]);
    out(`${w.file}: installed and started; it starts at login and restarts when it dies`);
    out(`logs: ${join(spec.workingDirectory, 'switchboard.log')}`);
  }
}

export function uninstall(o: ServiceOptions = {}): void {
  const out = o.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const run = o.run ?? realRun;
  const w = where(o);
  if (!existsSync(w.file)) {
    out(`${w.file}: not installed; nothing to do`);
    return;
  }
  if (w.kind === 'systemd') {
    run('systemctl', ['--user', 'disable', '--now', UNIT_NAME]);
    rmSync(w.file);
    must(run, 'systemctl', ['--user', 'daemon-reload']);
  } else {
    run('launchctl', ['bootout', `gui/${process.getuid?.() ?? ''}/${LAUNCHD_LABEL}`]);
    rmSync(w.file);
  }
  out(`${w.file}: stopped and removed`);
}

export function status(o: ServiceOptions = {}): void {
  const out = o.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const run = o.run ?? realRun;
  const w = where(o);
  if (!existsSync(w.file)) {
    out(`not installed (${w.file}); switchboard service install, in the gateway's folder`);
    return;
  }
  const r =
    w.kind === 'systemd'
      ? run('systemctl', ['--user', 'is-active', UNIT_NAME])
      : run('launchctl', ['print', `gui/${process.getuid?.() ?? ''}/${LAUNCHD_LABEL}`]);
  const state =
    w.kind === 'systemd' ? r.stdout.trim() || 'unknown' : r.status === 0 ? 'loaded' : 'not loaded';
  out(`installed (${w.file}): ${state}`);
  if (state !== 'active' && state !== 'loaded')
    out(
      w.kind === 'systemd'
        ? `see why: journalctl --user -u ${UNIT_NAME} -n 50`
        : 'see why: the switchboard.log in the gateway folder',
    );
}
