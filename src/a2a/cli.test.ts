import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { card, send, tasks } from '../cli/a2a.js';
import { KEYS } from '../server/testing.js';
import { type A2AGateway, a2aGateway } from './testing.js';

/** `switchboard a2a card|send|tasks` against a real gateway (the functions the CLI runs). */
describe('switchboard a2a', () => {
  let g: A2AGateway;
  afterEach(async () => {
    await g?.stop();
  });

  it('prints the card, sends a message to a skill and lists the tasks of the key', async () => {
    g = await a2aGateway('sqlite');
    const lines: string[] = [];
    const opts = {
      env: { SWITCHBOARD_URL: g.url, SWITCHBOARD_KEY: KEYS.agent },
      out: (l: string) => lines.push(l),
    };
    await card(undefined, { ...opts, json: true });
    expect(JSON.parse(lines[0]!)).toMatchObject({ name: 'Switchboard', capabilities: { streaming: true } });
    await send(g.url, 'review this', opts);
    expect(lines[1]).toMatch(/^\S+ {2}completed/);
    const id = lines[1]!.split(' ')[0];
    await tasks(opts);
    expect(lines[2]).toMatch(new RegExp(`^${id} {2}completed`));
    await expect(send(g.url, 'x', { ...opts, skill: 'nope' })).rejects.toThrow(/message.metadata.skill/);
  });

  it('says why no card was found: the network error for another agent, how to start it for this gateway', async () => {
    // A port that was just listening and is closed now: nothing answers there.
    const closed = await new Promise<string>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
        s.close(() => resolve(url));
      });
    });
    const opts = { env: { SWITCHBOARD_URL: closed, SWITCHBOARD_KEY: KEYS.agent }, out: () => {} };
    await expect(card(`${closed}/`, opts)).rejects.toThrow(
      `no A2A agent card at ${closed}/.well-known/agent-card.json: fetch failed (ECONNREFUSED)`,
    );
    await expect(card(undefined, opts)).rejects.toThrow(
      `Switchboard gateway unreachable at ${closed} (ECONNREFUSED); start it with`,
    );
    await expect(tasks(opts)).rejects.toThrow(`Switchboard gateway unreachable at ${closed} (ECONNREFUSED)`);
    await expect(send(closed, 'x', { ...opts, env: { SWITCHBOARD_KEY: KEYS.agent } })).rejects.toThrow(
      /no A2A agent card at .*\(ECONNREFUSED\)/,
    );
  });
});
