import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { judgeChannelUrls } from '../channels/targets.js';
import { revokedChannels, revokedRefusal } from '../delivery/index.js';
import { compileEgressPolicy } from '../egress/index.js';
import { schemaVersion } from '../store/migrate.js';
import { redactUrl } from '../store/open.js';
import { loadCliConfig, openCliStore, sqlitePath } from './context.js';
import { lintConfigFile } from './policy.js';
import { keySecret } from '../kernel/auth.js';
import { missingKeyReason } from './startup.js';

/** Checks what can be checked without starting the server; prints one line per finding. */
export async function run(opts: { config?: string }): Promise<void> {
  const lines: string[] = [];
  let problems = 0;
  const ok = (msg: string) => lines.push(`ok    ${msg}`);
  const warn = (msg: string) => lines.push(`warn  ${msg}`);
  const bad = (msg: string) => {
    problems++;
    lines.push(`FAIL  ${msg}`);
  };

  const loaded = loadCliConfig(opts); // an invalid config throws: one line per problem, exit 1
  const { config } = loaded;
  ok(`config valid (${loaded.source})`);

  if (existsSync(loaded.source)) {
    const lint = lintConfigFile(loaded.source);
    if (lint.ok) ok(`policy compiles: ${lint.summary}`);
    else for (const line of lint.lines) bad(`policy: ${line}`);
  }

  const store = config.store.database_url
    ? `PostgreSQL ${redactUrl(config.store.database_url)}`
    : `SQLite in ${resolve(config.data_dir)}`;
  const dbFile = sqlitePath(loaded);
  // A doctor run in the wrong folder must not leave a new store behind there (as `events tail`).
  if (dbFile && !existsSync(dbFile)) ok(`store: none yet at ${dbFile} (created on first start)`);
  else {
    try {
      const db = await openCliStore(loaded);
      try {
        ok(`store reachable: ${store}, schema version ${await schemaVersion(db)}`);
        // Channels the provider refused the credential of (docs/delivery.md, "Revoked channels").
        const revoked = await revokedChannels(db).catch(() => []);
        for (const r of revoked) if (config.channels[r.destination]) bad(revokedRefusal(r.destination, r));
      } finally {
        await db.close();
      }
    } catch (err) {
      bad(`store unreachable: ${store}: ${(err as Error).message}${causeOf(err)}`);
    }
  }

  const vaultEnv = process.env[config.vault.key_env];
  if (vaultEnv) ok(`vault key from $${config.vault.key_env}`);
  else if (config.store.database_url)
    warn(
      `vault key from ${resolve(config.data_dir, 'vault.key')}: replicas sharing PostgreSQL must share one key; set $${config.vault.key_env}`,
    );
  else
    ok(
      `vault key file ${resolve(config.data_dir, 'vault.key')}${existsSync(resolve(config.data_dir, 'vault.key')) ? '' : ' (created on first start)'}`,
    );

  if (config.auth.keys.length === 0)
    warn('no API keys configured: every /v1 request will get 401 (add auth.keys, see docs/config.md)');
  for (const k of config.auth.keys) {
    if (!keySecret(k)) bad(`key ${k.name} (${k.role}): ${missingKeyReason(k)}`);
    else ok(`key ${k.name} (${k.role})${k.key_file ? ` from ${k.key_file}` : ''}`);
  }
  const channels = Object.entries(config.channels);
  lines.push(
    `info  channels: ${channels.length ? channels.map(([n, c]) => `${n} (${c.type})`).join(', ') : 'none'}`,
  );
  // Every channel URL, url_env values included, as the egress guard will judge it (docs/security.md).
  const policy = compileEgressPolicy(config.egress.allow);
  for (const f of await judgeChannelUrls(config.channels, (k) => process.env[k], policy)) {
    if (f.level === 'ok') ok(f.message);
    else if (f.level === 'warn') warn(f.message);
    else bad(f.message);
  }
  const sources = Object.entries(config.sources);
  lines.push(
    `info  sources: ${sources.length ? sources.map(([n, s]) => `${n} (${s.source.type}) → POST /v1/ingress/${n}`).join(', ') : 'none'}`,
  );
  lines.push(
    `info  listen: http://${config.server.host}:${config.server.port}${config.server.public_url ? `, public ${config.server.public_url}` : ''}`,
  );

  process.stdout.write(`${lines.join('\n')}\n`);
  if (problems > 0) {
    process.stderr.write(`switchboard: doctor found ${problems} problem${problems === 1 ? '' : 's'}\n`);
    process.exitCode = 1;
  }
}

function causeOf(err: unknown): string {
  const c = (err as { cause?: { message?: string } }).cause;
  return c?.message ? ` (${c.message.split('\n')[0]})` : '';
}
