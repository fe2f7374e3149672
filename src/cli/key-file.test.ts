import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bridgeSettings, hookFilePath } from '../hook/settings.js';
import { gatewayFromEnv } from '../mcp/gateway.js';
import { RUNTIMES } from '../runtimes/index.js';
import { clientKey } from './client.js';

/** Every client finds a key `switchboard init` generated, with nothing exported (issue 21 point 3). */
const dir = mkdtempSync(join(tmpdir(), 'sb-keyfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (name: string, secret: string) => {
  mkdirSync(join(dir, '.switchboard', 'keys'), { recursive: true });
  writeFileSync(join(dir, '.switchboard', 'keys', `${name}.key`), `${secret}\n`, { mode: 0o600 });
  return join(dir, '.switchboard', 'keys', `${name}.key`);
};

describe('key files', () => {
  const agentFile = key('laptop-agent', 'sb_agent-secret-0123456789');
  key('me', 'sb_approver-secret-0123456789');
  writeFileSync(
    join(dir, 'switchboard.yaml'),
    [
      'auth:',
      '  keys:',
      '    - { name: laptop-agent, role: agent, key_file: ./.switchboard/keys/laptop-agent.key }',
      '    - { name: me, role: approver, key_file: ./.switchboard/keys/me.key }',
      '',
    ].join('\n'),
  );

  it('the hook bridge reads the file hook.json names, on every call', () => {
    const home = join(dir, 'home');
    const env = {};
    mkdirSync(join(home, '.config', 'switchboard'), { recursive: true });
    writeFileSync(hookFilePath(env, home), JSON.stringify({ key_file: agentFile }));
    expect(bridgeSettings(RUNTIMES['claude-code'], env, home).key).toBe('sb_agent-secret-0123456789');
    // The environment still wins.
    expect(bridgeSettings(RUNTIMES['claude-code'], { SWITCHBOARD_KEY: 'x'.repeat(20) }, home).key).toBe(
      'x'.repeat(20),
    );
  });

  it('the MCP server reads SWITCHBOARD_KEY_FILE, and says which file is missing', () => {
    expect(gatewayFromEnv({ SWITCHBOARD_KEY_FILE: agentFile }).key).toBe('sb_agent-secret-0123456789');
    expect(() => gatewayFromEnv({ SWITCHBOARD_KEY_FILE: join(dir, 'none.key') })).toThrow(
      /none\.key is missing/,
    );
  });

  it('client commands in the gateway folder pick the key of the role they need from its config', () => {
    expect(clientKey({}, ['approver', 'admin'], dir)).toBe('sb_approver-secret-0123456789');
    expect(clientKey({}, ['agent'], dir)).toBe('sb_agent-secret-0123456789');
    expect(clientKey({}, ['admin'], dir)).toBeUndefined();
    expect(clientKey({}, ['approver'], tmpdir())).toBeUndefined();
  });
});
