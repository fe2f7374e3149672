import { cpus } from 'node:os';
import { benchA2A } from './a2a.js';
import { benchA2ALatency } from './a2a-latency.js';
import { benchAgents } from './agents.js';
import { benchAppend, benchIdleMemory } from './core.js';
import { benchDelivery } from './delivery.js';
import { benchGate } from './gate.js';
import { benchGateHttp } from './gate-http.js';
import { benchHistory } from './history.js';
import { benchHooks } from './hooks.js';
import { benchIngress } from './ingress.js';
import { benchNats } from './nats.js';
import { benchNotify } from './notify.js';
import { benchTelemetry } from './telemetry.js';
import { benchPhone } from './phone.js';
import { benchReach } from './reach.js';
import { benchReplicas } from './replicas.js';
import { benchSustained } from './sustained.js';

/**
 * `npm run bench`: every performance goal of the project, each printed beside a bare baseline
 * measured in the same run on the same machine. Figures, not assertions: nothing here fails a build.
 */
const SECTIONS: Record<string, () => Promise<string[]>> = {
  append: benchAppend,
  memory: benchIdleMemory,
  gate: benchGate,
  'gate-http': benchGateHttp,
  history: benchHistory,
  ingress: benchIngress,
  delivery: benchDelivery,
  hooks: benchHooks,
  notify: benchNotify,
  phone: benchPhone,
  reach: benchReach,
  sustained: benchSustained,
  a2a: benchA2A,
  'a2a-latency': benchA2ALatency,
  replicas: benchReplicas,
  nats: benchNats,
  agents: benchAgents,
  telemetry: benchTelemetry,
};

const only = process.argv.slice(2);
console.log(
  `switchboard bench — node ${process.version}, ${cpus().length} cores, ${new Date().toISOString()}`,
);
for (const [name, run] of Object.entries(SECTIONS)) {
  if (only.length > 0 && !only.includes(name)) continue;
  try {
    for (const l of await run()) console.log(l);
  } catch (err) {
    console.log(`${name}: failed: ${(err as Error).stack}`);
  }
}
