import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import { pino } from 'pino';
import { newId } from '../envelope/index.js';
import type { LaunchRequest, TaskService, TaskView } from '../tasks/port.js';
import type { Dialect } from '../store/port.js';
import { type IngressModule, type IngressOptions, ingressModule } from './module.js';

/** Test helpers for the ingress suites: real example payloads, signing, and a fake task service. */

// The package is CommonJS JSON whose typings claim an ES default export; load it the way Node does.
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Array<{
  name: string;
  examples: Array<Record<string, unknown>>;
}>;

export function githubExample(name: string, action?: string): Record<string, unknown> {
  const group = examples.find((g) => g.name === name);
  const found = group?.examples.find((e) => action === undefined || e.action === action);
  if (!found)
    throw new Error(`no @octokit/webhooks-examples payload for ${name}${action ? `.${action}` : ''}`);
  return structuredClone(found);
}

export const GITHUB_SECRET = 'gh-test-secret';
export const SLACK_SECRET = 'slack-test-secret';

let deliveries = 0;

/** Headers and body of a GitHub delivery signed the way GitHub signs it (octokit's own `sign`). */
export async function githubDelivery(
  event: string,
  payload: unknown,
  opts: { delivery?: string; secret?: string } = {},
): Promise<{ headers: Record<string, string>; body: string; delivery: string }> {
  const body = JSON.stringify(payload);
  const delivery = opts.delivery ?? `d-${process.pid}-${++deliveries}`;
  return {
    body,
    delivery,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': delivery,
      'x-hub-signature-256': await sign(opts.secret ?? GITHUB_SECRET, body),
    },
  };
}

export function slackRequest(
  body: string,
  now: number,
  contentType = 'application/json',
): Record<string, string> {
  const ts = String(Math.floor(now / 1000));
  const sig = createHmac('sha256', SLACK_SECRET).update(`v0:${ts}:${body}`).digest('hex');
  return { 'content-type': contentType, 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${sig}` };
}

/** Records what would be launched; each launch gets a new task id. */
export class FakeTasks implements TaskService {
  readonly launched: Array<{ req: LaunchRequest; task: TaskView }> = [];

  async launch(req: LaunchRequest): Promise<TaskView> {
    const now = new Date().toISOString();
    const task: TaskView = {
      id: newId('task'),
      state: 'submitted',
      owner: req.owner ?? null,
      runtime: null,
      session_id: null,
      correlation_id: req.cause.correlation_id,
      title: req.title,
      created_at: now,
      updated_at: now,
      last_activity_at: now,
      steps: 0,
      lineage: { hop_count: req.cause.lineage.hop_count + 1, depth: req.cause.lineage.depth + 1 },
    };
    this.launched.push({ req, task });
    return task;
  }
  async get(): Promise<TaskView | undefined> {
    return undefined;
  }
  async touch(): Promise<void> {}
  async resume(): Promise<TaskView> {
    throw new Error('not in the fake');
  }
}

export interface IngressHarness {
  ingress: IngressModule;
  config: Record<string, unknown>;
}

/** Config for a test app: a GitHub and a Slack source, plus the given triggers. */
export function ingressHarness(triggers: unknown[] = [], opts: IngressOptions = {}): IngressHarness {
  return {
    ingress: ingressModule({ workers: false, secrets: () => undefined, ...opts }),
    config: {
      server: { body_limit_bytes: 256 * 1024 },
      sources: {
        github: { type: 'github', secret: GITHUB_SECRET },
        slack: { type: 'slack', secret: SLACK_SECRET },
      },
      triggers,
    },
  };
}

export const silentLogger = () => pino({ level: 'silent' });
export type { Dialect };
