import { describe, expect, it } from 'vitest';
import { buildEnvelope, canonicalJson, toCloudEvent } from '../envelope/index.js';
import { cloudEventJson } from './publisher.js';

const DEFAULTS = { tenant_id: 't1', environment: 'test' };
const URI = 'https://gw.example';

describe('cloudEventJson', () => {
  const envelopes = [
    buildEnvelope({ type: 'agent.tool.requested', correlation_id: 'c1' }, DEFAULTS),
    buildEnvelope(
      {
        type: 'agent.tool.requested',
        correlation_id: 'c2',
        causation_id: 'evt_01J0000000000000000000000A',
        subject: { tool: 'Bash', action: 'exec', resource_ref: 'repo://x' },
        // Keys JSON.stringify would order differently from the canonical form (integer-like first),
        // and text that needs escaping: the spliced body must still be the same JSON value.
        redacted_summary: { '10': 'ten', '9': 'nine', b: 'quote " and \\ and \u2028', a: [1.5, -0, 1e21] },
      },
      DEFAULTS,
    ),
  ];

  it('builds the same CloudEvent from the stored body as from serializing the envelope', () => {
    for (const env of envelopes) {
      const spliced = cloudEventJson(env, URI, canonicalJson(env));
      expect(JSON.parse(spliced)).toEqual(JSON.parse(cloudEventJson(env, URI)));
      expect(JSON.parse(spliced)).toEqual(JSON.parse(JSON.stringify(toCloudEvent(env, URI))));
    }
  });

  it('carries the stored body as the data member byte for byte', () => {
    const env = envelopes[1]!;
    const body = canonicalJson(env);
    expect(cloudEventJson(env, URI, body).endsWith(`,"data":${body}}`)).toBe(true);
  });
});
