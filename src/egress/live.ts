import type { CoreConfig } from '../config/schema.js';
import type { ConfigReloads } from '../kernel/reload.js';
import { createEgress, type Egress, type EgressOptions } from './egress.js';

/**
 * An egress that follows `egress.allow` as the config is reloaded (SIGHUP, the file edited): what
 * every module that sends builds, so one edit reaches deliveries, channel sends, task `http` actions,
 * reach tools, ingress re-reads and A2A pushes alike, and a `dlq replay` after the edit is judged by
 * the list now serving. `close()` also stops following.
 */
export function liveEgress(
  s: { config: CoreConfig; reloads?: ConfigReloads },
  opts: Omit<EgressOptions, 'allow'> = {},
): Egress {
  const egress = createEgress({ ...opts, allow: s.config.egress.allow });
  const off = s.reloads?.onReload((c) => egress.reload(c.egress.allow));
  const close = egress.close.bind(egress);
  return Object.assign(egress, {
    close: async () => {
      off?.();
      await close();
    },
  });
}
