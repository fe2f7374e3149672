import type { AgentCard } from '@a2a-js/sdk';
import type { A2AConfig } from './config.js';

/** Where the JSON-RPC binding is served (CONTRACT.md leaves the path to the card). */
export const JSONRPC_PATH = '/a2a';
/** Public keys that verify push JWTs (CONTRACT.md). */
export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * The A2A v1.0 agent card: the JSON-RPC binding at the public URL, in v1.0 and (through the SDK's
 * compat layer) v0.3, bearer agent keys, and the configured skills.
 */
export function agentCard(cfg: A2AConfig, publicUrl: string, version: string): AgentCard {
  const url = `${publicUrl}${JSONRPC_PATH}`;
  const iface = (protocolVersion: string) => ({
    url,
    protocolBinding: 'JSONRPC',
    tenant: '',
    protocolVersion,
  });
  return {
    name: cfg.name,
    description: cfg.description,
    version,
    supportedInterfaces: [iface('1.0'), iface('0.3')],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: cfg.push, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'bearer',
            bearerFormat: '',
            description: 'A Switchboard agent key (Authorization: Bearer <key>)',
          },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: cfg.skills.map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: s.tags,
      examples: s.examples,
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}
