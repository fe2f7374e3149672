import type { z } from 'zod';
import { type ConfigCheck, type ConfigProblem, describeIssues } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { approvalsConfigSchema } from '../approvals/config.js';
import { callbacksConfig } from '../callbacks/config.js';
import { checkChannels } from '../channels/index.js';
import { deliveryConfigSchema } from '../delivery/config.js';
import { egressAllowProblems } from '../egress/index.js';
import { policyConfigSchema } from '../gate/config.js';
import { checkIngressConfig } from '../ingress/config.js';
import { notifyConfigProblems } from '../notify/config.js';
import { hooksConfigSchema } from '../runtimes/http/config.js';
import { signalsConfigSchema } from '../signals/config.js';
import { tasksConfigSchema } from '../tasks/config.js';

/**
 * Validates a section a module owns with that module's strict schema, reporting problems under the
 * section's full key path (`sources.github.secret_env: …`), as the core schema does for its own keys.
 */
export function sectionCheck(prefix: string, pick: (c: Config) => unknown, schema: z.ZodType): ConfigCheck {
  return (config) => {
    const result = schema.safeParse(pick(config));
    if (result.success) return [];
    return describeIssues(result.error.issues).map(
      (p): ConfigProblem => ({
        path:
          prefix === ''
            ? p.path
            : p.path === '(root)'
              ? prefix
              : p.path.startsWith('[')
                ? `${prefix}${p.path}`
                : `${prefix}.${p.path}`,
        message: p.message,
      }),
    );
  };
}

/** The config checks modules add for the sections they own. */
export function moduleConfigChecks(): ConfigCheck[] {
  return [
    (c) => checkChannels(c.channels),
    (c) => notifyConfigProblems({ routes: c.routes, notify: c.notify, channels: c.channels }),
    sectionCheck('approvals', (c) => c.approvals, approvalsConfigSchema),
    sectionCheck('tasks', (c) => c.tasks, tasksConfigSchema),
    sectionCheck('hooks', (c) => c.hooks, hooksConfigSchema),
    sectionCheck('signals', (c) => c.signals, signalsConfigSchema),
    sectionCheck('callbacks', (c) => c.callbacks, callbacksConfig),
    (c) => checkIngressConfig(c),
    sectionCheck(
      '',
      (c) => ({ rules: c.rules, policy_files: c.policy_files, gate: c.gate }),
      policyConfigSchema,
    ),
    sectionCheck('delivery', (c) => c.delivery, deliveryConfigSchema),
    (c) =>
      egressAllowProblems(c.egress.allow).map((line) => {
        const m = /^(egress\.allow\[\d+\])\s*(.*)$/.exec(line);
        return m ? { path: m[1]!, message: m[2]! } : { path: 'egress.allow', message: line };
      }),
  ];
}
