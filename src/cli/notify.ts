import { Gateway, gatewayFromEnv } from '../mcp/gateway.js';
import { reportProgressSchema } from '../notify/schema.js';

export interface NotifyOptions {
  stage: string;
  summary: string;
  detail?: string;
  artifact?: string;
  severity?: string;
}

/** `switchboard notify`: `report_progress` for scripts. Prints `{ id, status }`; a refusal exits 1. */
export async function run(opts: NotifyOptions): Promise<void> {
  const parsed = reportProgressSchema.safeParse({
    stage: opts.stage,
    summary: opts.summary,
    ...(opts.detail !== undefined ? { detail: opts.detail } : {}),
    ...(opts.artifact !== undefined ? { artifact: opts.artifact } : {}),
    ...(opts.severity !== undefined ? { severity: opts.severity } : {}),
  });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new Error(`--${String(first?.path[0] ?? 'stage')}: ${first?.message ?? 'invalid'}`);
  }
  const result = await new Gateway(gatewayFromEnv()).reportProgress(parsed.data);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
