import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { approvalsModule } from '../src/approvals/module.js';
import { parseConfig } from '../src/server/config.js';
import { gateModule } from '../src/gate/module.js';
import { coreModule } from '../src/server/core-routes.js';
import { startServer } from '../src/server/serve.js';
import { type PacedResult, pacedLoad } from './paced.js';
import { costLine, costs, fmt, line } from './stats.js';

const AGENT_KEY = 'bench-agent-key-0123456789abcdef';
/** The target load: 1,000 requests per second, paced, not as fast as possible. */
const RATE = Number(process.env.BENCH_GATE_HTTP_RATE ?? 1_000);
const DURATION_S = Number(process.env.BENCH_GATE_HTTP_SECONDS ?? 10);
/** Enough connections that a slow response does not hold the paced rate back. */
const CONNECTIONS = 32;

/** 60 Bash rules like bench/gate.ts's, so the CEL work per request is a realistic candidate set. */
function bashRules(): unknown[] {
  const words = ['rm -rf', 'push --force', 'curl', 'sudo', 'chmod 777', 'dd if=', 'mkfs', 'ssh', 'scp', 'nc'];
  const kinds = ['deny', 'require_approval', 'defer', 'allow'];
  return Array.from({ length: 60 }, (_, i) => ({
    id: `bash-${i}`,
    priority: i % 7,
    match: { tools: ['Bash'] },
    when:
      i % 2 === 0
        ? `input.command.contains("${words[i % 10]}${i}")`
        : `input.command.startsWith("${words[i % 10]}") && task.steps > ${i}`,
    decision: kinds[i % 4],
    reason_code: `BASH_${i}`,
  }));
}

/**
 * `POST /v1/gate/evaluate` on a real server (SQLite, durable by default): each request decides an
 * allowed Bash intent against 60 candidate rules, seals the input in the vault, appends requested,
 * authorized and capability.issued, and signs a capability. Beside it, `GET /healthz` at the same rate.
 */
export async function benchGateHttp(): Promise<string[]> {
  const out: string[] = [];
  for (const sync of ['full', 'normal'] as const) out.push(...(await benchOne(sync)));
  return out;
}

async function benchOne(sync: 'full' | 'normal'): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-gate-http-'));
  const config = parseConfig({
    data_dir: join(dir, 'data'),
    server: { host: '127.0.0.1', port: 0 },
    store: { sqlite_synchronous: sync },
    log: { level: 'silent' },
    auth: { keys: [{ name: 'bench', role: 'agent', key: AGENT_KEY }] },
    rules: bashRules(),
  });
  const server = await startServer(config, {
    modules: [
      coreModule(),
      approvalsModule({ expiryWorker: false }),
      gateModule({ watch: false, sighup: false }),
    ],
    logger: pino({ level: 'silent' }),
    env: { SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64') },
    defaultMetrics: false,
  });
  // Diagnosis: BENCH_GATE_RELAY=off measures the route alone, without the relay draining the outbox.
  if (process.env.BENCH_GATE_RELAY === 'off') await server.services.relay.stop();
  const before = loadavg();
  try {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${AGENT_KEY}` };
    const body = JSON.stringify({
      tool: 'Bash',
      input: { command: 'npm test', description: 'Run tests', timeout: 120000 },
      runtime: 'claude-code',
    });
    // CPU of this process (every thread: HTTP, the gate, the SQLite writer) per answered request: the
    // figure that says what a request costs us when latency is the scheduler's (a loaded machine).
    let cpu = process.cpuUsage();
    // How busy the event loop was (the whole run, warm-up second included): near 1 means every request
    // waits for the ones before it, so the p99 is a queue's, whatever the disk does.
    let elu = performance.eventLoopUtilization();
    const paced = { rate: RATE, seconds: DURATION_S, connections: CONNECTIONS };
    const health = await pacedLoad({ ...paced, url: `${server.url}/healthz` });
    const healthCpu = cpuPer(process.cpuUsage(cpu), health.ok);
    const healthElu = performance.eventLoopUtilization(elu).utilization;
    const c0 = costs(server.services);
    cpu = process.cpuUsage();
    elu = performance.eventLoopUtilization();
    const ours = await pacedLoad({
      ...paced,
      url: `${server.url}/v1/gate/evaluate`,
      method: 'POST',
      body,
      headers,
    });
    const oursCpu = cpuPer(process.cpuUsage(cpu), ours.ok);
    const oursElu = performance.eventLoopUtilization(elu).utilization;
    const c1 = costs(server.services);
    const after = loadavg();
    const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
    return [
      `gate over HTTP: paced ${RATE}/s for ${DURATION_S} s (first second not counted), ${CONNECTIONS} connections, an undici Pool in a second process, latency from each request's due time; SQLite ${config.store.sqlite_synchronous}; load average ${la(before)} → ${la(after)}`,
      line('GET /healthz (baseline)', `${health.rps.toFixed(0)}/s`, latencies(health)),
      line(
        'POST /v1/gate/evaluate (allow + capability)',
        `${ours.rps.toFixed(0)}/s`,
        `${latencies(ours)} (target p99 < 5 ms)`,
      ),
      line('  2xx / non-2xx / errors', `${ours.ok} / ${ours.non2xx} / ${ours.errors}`),
      line(
        '  the generator sent late, p99',
        `${fmt(ours.sendLateP99, 2)} ms`,
        `/healthz run ${fmt(health.sendLateP99, 2)} ms`,
      ),
      line(
        '  server CPU per request',
        `${oursCpu.toFixed(0)} µs`,
        `GET /healthz ${healthCpu.toFixed(0)} µs in the same run`,
      ),
      line(
        '  event loop busy',
        `${fmt(oursElu * 100)} %`,
        `GET /healthz ${fmt(healthElu * 100)} % in the same run`,
      ),
      costLine('  per decision', c0, c1, ours.ok),
    ];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function latencies(r: PacedResult): string {
  const ms = (n: number) => fmt(n, 2);
  return `p50 ${ms(r.p50)} ms, p90 ${ms(r.p90)} ms, p99 ${ms(r.p99)} ms, max ${ms(r.max)} ms`;
}

function cpuPer(used: NodeJS.CpuUsage, requests: number): number {
  return (used.user + used.system) / Math.max(1, requests);
}

// `npx tsx bench/gate-http.ts` runs this section alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  for (const l of await benchGateHttp()) console.log(l);
}
