import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * File watching shared by the gate (policy files) and the server (the config file, for `egress`).
 * Editors write a file in several steps (truncate, write, rename); one reload after they settle.
 */
export const DEFAULT_WATCH_DEBOUNCE_MS = 150;

export interface FileWatch {
  /** Watches these files from now on (the set changes when `policy_files` globs match new files). */
  update(paths: readonly string[]): void;
  close(): void;
}

/**
 * Watches the directories of `paths`, not the files: an editor that saves by rename replaces the
 * inode, and a watch on the old file would go quiet. Any change to a watched name, or to a YAML file
 * in a watched directory (a new file a glob may now match), calls `onChange` once after `debounceMs`.
 */
export function watchFiles(onChange: () => void, debounceMs = DEFAULT_WATCH_DEBOUNCE_MS): FileWatch {
  const watchers = new Map<string, FSWatcher>();
  let names = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const fire = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) onChange();
    }, debounceMs);
    timer.unref();
  };

  return {
    update(paths) {
      names = new Set(paths.map((p) => basename(p)));
      const dirs = new Set(paths.map((p) => dirname(p)));
      for (const [dir, w] of watchers) {
        if (!dirs.has(dir)) {
          w.close();
          watchers.delete(dir);
        }
      }
      for (const dir of dirs) {
        if (watchers.has(dir)) continue;
        try {
          const w = watch(dir, { persistent: false }, (_event, file) => {
            const name = file?.toString();
            if (!name || names.has(name) || /\.ya?ml$/.test(name)) fire();
          });
          w.on('error', () => {
            w.close();
            watchers.delete(dir);
          });
          watchers.set(dir, w);
        } catch {
          // A directory that vanished cannot be watched; SIGHUP still reloads.
        }
      }
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
