import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { ConfigError, type ConfigSpec, loadConfigWith } from '../config/load.js';
import type { CoreConfig } from '../config/schema.js';
import type { ReloadHub } from '../kernel/reload.js';
import { DEFAULT_WATCH_DEBOUNCE_MS, watchFiles } from '../kernel/watch.js';

export interface ConfigWatchOptions {
  path: string;
  spec: ConfigSpec;
  /** `egress.allow` as the server started with it: what the first reload compares with. */
  serving: readonly string[];
  hub: ReloadHub;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Reload when the file changes (default true). */
  watch?: boolean;
  /** Reload on SIGHUP (default true). */
  sighup?: boolean;
  debounceMs?: number;
}

export type ConfigReloadOutcome =
  | { kind: 'loaded'; egress: { added: string[]; removed: string[] } }
  | { kind: 'rejected'; problems: string[] };

export interface ConfigWatch {
  /** What SIGHUP and a file change do; exposed for tests and for `reload()` callers. */
  reload(trigger: 'sighup' | 'watch' | 'manual'): ConfigReloadOutcome;
  close(): void;
}

/**
 * Reads the config file again on SIGHUP and when it changes, like the gate does for its rules, and
 * publishes a config that parses to `services.reloads`. A broken edit is logged with its problems and
 * changes nothing: the serving values stay. Each reload says what changed in `egress.allow` (the
 * security-relevant list), so the log shows when a host was let through and when it stopped being.
 */
export function watchConfig(o: ConfigWatchOptions): ConfigWatch {
  let serving = o.serving;
  const reload = (trigger: 'sighup' | 'watch' | 'manual'): ConfigReloadOutcome => {
    let next: CoreConfig;
    try {
      next = loadConfigWith(o.spec, { path: o.path, env: o.env ?? process.env }).config;
    } catch (err) {
      const problems =
        err instanceof ConfigError
          ? err.problems.map((p) => `${p.path}: ${p.message}`)
          : [(err as Error).message];
      o.logger.error(
        { trigger, config: o.path, problems },
        `config reload refused (${problems[0]}); the serving config stays — fix the file and save again or send SIGHUP`,
      );
      return { kind: 'rejected', problems };
    }
    const before = new Set(serving);
    const after = new Set(next.egress.allow);
    const added = [...after].filter((h) => !before.has(h));
    const removed = [...before].filter((h) => !after.has(h));
    serving = next.egress.allow;
    for (const err of o.hub.publish(next))
      o.logger.error({ err }, 'a module could not take the reloaded config; it keeps the values it had');
    o.logger.info(
      { trigger, config: o.path, egress_added: added, egress_removed: removed },
      added.length + removed.length === 0
        ? 'config reloaded; egress.allow unchanged'
        : `config reloaded; egress.allow now ${next.egress.allow.length} entries (+${added.length} −${removed.length})`,
    );
    return { kind: 'loaded', egress: { added, removed } };
  };
  const watcher =
    o.watch === false || !existsSync(o.path)
      ? undefined
      : watchFiles(() => void reload('watch'), o.debounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS);
  watcher?.update([o.path]);
  const onHup = o.sighup === false ? undefined : () => void reload('sighup');
  if (onHup) process.on('SIGHUP', onHup);
  return {
    reload,
    close() {
      watcher?.close();
      if (onHup) process.off('SIGHUP', onHup);
    },
  };
}
