import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateModule } from '../gate/module.js';
import { runtimeIntents } from '../runtimes/index.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { shadow } from './shadow.js';

describe('switchboard policy shadow', () => {
  let gw: TestGateway;
  let dir: string;
  const out: string[] = [];
  const err: string[] = [];
  const io = () => ({
    cwd: dir,
    env: { SWITCHBOARD_URL: gw.gateway.url, SWITCHBOARD_KEY: KEYS.admin },
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
  });
  beforeAll(async () => {
    gw = await testGateway({
      dialect: 'sqlite',
      config: {
        rules: [],
        auth: {
          keys: [
            { name: 'ops', role: 'admin', key: KEYS.admin },
            { name: 'bot', role: 'agent', key: KEYS.agent },
          ],
        },
      },
      modules: [coreModule(), gateModule({ watch: false, sighup: false, intents: runtimeIntents })],
    });
    dir = mkdtempSync(join(tmpdir(), 'sb-shadow-cli-'));
    for (const command of ['ls', 'git push --force', 'rm -rf /tmp/x']) {
      const res = await fetch(`${gw.gateway.url}/v1/gate/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.agent}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'Bash', input: { command }, runtime: 'claude-code', session_id: 's1' }),
      });
      expect(res.status).toBe(200);
    }
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('inlines the policy files a draft names and prints each change', async () => {
    writeFileSync(join(dir, 'draft.yaml'), 'policy_files: [./policy/*.yaml]\n');
    mkdirSync(join(dir, 'policy'));
    writeFileSync(
      join(dir, 'policy', 'git.yaml'),
      'rules:\n  - { id: no-force, match: { kinds: [shell] }, when: \'args.command.contains("push --force")\', decision: deny, reason_code: FORCE }\n',
    );
    out.length = 0;
    expect(await shadow('draft.yaml', { ...io(), since: '1h' })).toBe(0);
    expect(out[0]).toBe('3 recorded intents since 1h re-decided; 1 would change');
    expect(out[1]).toMatch(/^ {2}allow→deny +1$/);
    expect(out[2]).toMatch(
      /^evt_\S+ {2}claude-code {2}shell {2}allow→deny {2}no-force {2}Bash: git push --force$/,
    );
    out.length = 0;
    expect(await shadow('draft.yaml', { ...io(), json: true, limit: '1' })).toBe(0);
    expect(JSON.parse(out[0]!)).toEqual({ evaluated: 1, skipped: 0, changed: [], counts: {} });
  });

  it('reports a broken draft with its own lines and sends nothing', async () => {
    writeFileSync(
      join(dir, 'broken.yaml'),
      'rules:\n  - { id: a, whne: "true", decision: deny, reason_code: A }\n',
    );
    err.length = 0;
    expect(await shadow('broken.yaml', io())).toBe(1);
    expect(err[0]).toMatch(/^broken\.yaml:2:\d+ rules\.0: Unrecognized key: "whne"$/);
    expect(await shadow('missing.yaml', io())).toBe(1);
    expect(await shadow('draft.yaml', { ...io(), limit: 'ten' })).toBe(1);
    await expect(
      shadow('draft.yaml', {
        ...io(),
        env: { SWITCHBOARD_URL: gw.gateway.url, SWITCHBOARD_KEY: KEYS.agent },
      }),
    ).rejects.toThrow(/admin key/);
  });
});
