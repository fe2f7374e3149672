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
});
