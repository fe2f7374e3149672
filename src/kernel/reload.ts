import type { CoreConfig } from '../config/schema.js';

/**
 * Config edits while the gateway runs. The server reads its config file again on SIGHUP and when the
 * file changes (`src/server/reload.ts`); a config that parses is handed to every listener, one that
 * does not is logged and the serving values stay. The gate reloads its rules on its own (it also
 * watches `policy_files`); this carries what other modules read live, `egress.allow` first
 * (`src/egress/live.ts`).
 */
export interface ConfigReloads {
  /** Calls `fn` with the whole config after each reload that parsed; returns the unsubscribe. */
  onReload(fn: (config: CoreConfig) => void): () => void;
}

export class ReloadHub implements ConfigReloads {
  private readonly listeners = new Set<(config: CoreConfig) => void>();

  onReload(fn: (config: CoreConfig) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Hands `config` to every listener; one that throws does not stop the others. Returns the errors. */
  publish(config: CoreConfig): unknown[] {
    const errors: unknown[] = [];
    for (const fn of this.listeners) {
      try {
        fn(config);
      } catch (err) {
        errors.push(err);
      }
    }
    return errors;
  }
}
