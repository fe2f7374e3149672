import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../cli/diff.js';
import { EXAMPLE_CONFIG } from '../../config/example.js';
import { parseConfig } from '../../server/config.js';
import { compileRoutes, selectChannels } from '../../notify/routes.js';
import { agentMatch, flow, parseNotifyTarget, planNotifyConfig } from './notify-config.js';
import { routesSchema } from '../../notify/config.js';

const TOPIC = 'sb-3f9c1a7e5d2b4c60a1e8';
const ntfy = { kind: 'ntfy' as const, url: 'https://ntfy.sh', topic: TOPIC };

/** Loads YAML text the way `serve` does, module checks included; throws ConfigError on any problem. */
function load(text: string) {
  return parseConfig(parseDocument(text).toJS() ?? {}, 'test');
}

function ok(outcome: ReturnType<typeof planNotifyConfig>) {
  if (outcome.kind !== 'ok') throw new Error(outcome.problem);
  return outcome;
}

/** The lines of `after` that are not in `before`, in order (a line diff is enough for appended lines). */
function addedLines(before: string, after: string): string[] {
  const old = before.split('\n');
  const out: string[] = [];
  let i = 0;
  for (const line of after.split('\n')) {
    if (old[i] === line) i++;
    else out.push(line);
  }
  expect(i, 'every original line is still there, in order').toBe(old.length);
  return out;
}

describe('parseNotifyTarget', () => {
  it('reads an ntfy.sh topic URL as the server root and the topic', () => {
    expect(parseNotifyTarget(`https://ntfy.sh/${TOPIC}`)).toEqual(ntfy);
    expect(parseNotifyTarget(`https://ntfy.sh/${TOPIC}/`)).toEqual(ntfy);
  });

  it('keeps a self-hosted server path before the topic', () => {
    expect(parseNotifyTarget('http://10.0.0.5:8080/ntfy/agents')).toEqual({
      kind: 'ntfy',
      url: 'http://10.0.0.5:8080/ntfy',
      topic: 'agents',
    });
  });

  it('takes a bare word as a channel name', () => {
    expect(parseNotifyTarget('team-slack')).toEqual({ kind: 'channel', name: 'team-slack' });
  });

  it('refuses URLs that cannot be an ntfy topic, and names that cannot be a channel', () => {
    for (const bad of [
      'ftp://ntfy.sh/topic',
      'https://user:pw@ntfy.sh/topic',
      'https://ntfy.sh/topic?auth=abc',
      'https://ntfy.sh/not%20a%20topic',
      `https://ntfy.sh/${'x'.repeat(65)}`,
      'https://',
      'Phone',
      'my phone',
    ]) {
      expect(parseNotifyTarget(bad).kind, bad).toBe('invalid');
    }
    // A server alone gets a new random topic: the guide never asks for `openssl rand`.
    const p = parseNotifyTarget('https://ntfy.sh/');
    expect(p).toMatchObject({ kind: 'ntfy', url: 'https://ntfy.sh', generated: true });
    expect(p.kind === 'ntfy' && p.topic).toMatch(/^sb-[0-9a-f]{24}$/);
    expect(parseNotifyTarget('https://ntfy.sh')).not.toEqual(p);
  });
});

describe('planNotifyConfig on the file switchboard init writes', () => {
  it('adds a phone channel and a route, keeping the file byte for byte outside the changed lines', () => {
    const plan = ok(planNotifyConfig(EXAMPLE_CONFIG, { target: ntfy }));
    expect(plan.changed).toBe(true);
    expect(plan.channel).toBe('phone');
    const diff = unifiedDiff(EXAMPLE_CONFIG, plan.text, 'switchboard.yaml', true);
    expect(diff.split('\n').filter((l) => /^[-+][^-+]/.test(l))).toEqual([
      '-channels: {}',
      '+channels:',
      `+  phone: { type: ntfy, url: 'https://ntfy.sh', topic: ${TOPIC} }`,
      '-routes: []',
      '+routes:',
      `+  - { match: '${agentMatch(['laptop-agent'])}', channels: [phone] }`,
    ]);
    // The commented examples under each section are still there.
    expect(plan.text).toContain('#  phone: { type: ntfy, url: "https://ntfy.sh", topic: "my-agents"');
    const config = load(plan.text);
    expect(config.channels.phone).toEqual({ type: 'ntfy', url: 'https://ntfy.sh', topic: TOPIC });
    // The loaded config holds routes as notify's schema parsed them (defaults filled in).
    expect(config.routes).toEqual(
      routesSchema.parse([{ match: agentMatch(['laptop-agent']), channels: ['phone'] }]),
    );
  });

  it('changes nothing the second time', () => {
    const once = ok(planNotifyConfig(EXAMPLE_CONFIG, { target: ntfy })).text;
    const twice = ok(planNotifyConfig(once, { target: ntfy }));
    expect(twice.changed).toBe(false);
    expect(twice.text).toBe(once);
    // Naming the channel that now exists is the same request.
    expect(ok(planNotifyConfig(once, { target: { kind: 'channel', name: 'phone' } })).changed).toBe(false);
  });

  it('warns that buttons need server.public_url, and stays quiet when the environment sets it', () => {
    const plan = ok(planNotifyConfig(EXAMPLE_CONFIG, { target: ntfy }));
    expect(plan.warnings.join('\n')).toMatch(
      /server\.public_url is not set.*Approve\/Deny buttons.*--public-url/,
    );
    const withEnv = ok(
      planNotifyConfig(EXAMPLE_CONFIG, {
        target: ntfy,
        env: { SWITCHBOARD_PUBLIC_URL: 'https://sb.example.com' },
      }),
    );
    expect(withEnv.warnings).toEqual([]);
  });

  it('writes --public-url into the server section beside its comments', () => {
    const plan = ok(
      planNotifyConfig(EXAMPLE_CONFIG, { target: ntfy, publicUrl: 'http://laptop.tailnet:8787' }),
    );
    const diff = unifiedDiff(EXAMPLE_CONFIG, plan.text, 'switchboard.yaml', true);
    expect(diff).toContain(
      "   metrics_public: false      # /metrics: loopback callers or an admin key unless true\n+  public_url: 'http://laptop.tailnet:8787'\n",
    );
    expect(load(plan.text).server.public_url).toBe('http://laptop.tailnet:8787');
    expect(plan.warnings).toEqual([]);
    // A different URL later replaces the value, not the line's neighbours.
    const again = ok(planNotifyConfig(plan.text, { target: ntfy, publicUrl: 'https://sb.example.com' }));
    expect(load(again.text).server.public_url).toBe('https://sb.example.com');
    expect(again.text.split('\n').length).toBe(plan.text.split('\n').length);
  });

  it('sends approvals, reports and runtime signals of the agent key to the channel, and nothing of other keys', () => {
    const routes = load(ok(planNotifyConfig(EXAMPLE_CONFIG, { target: ntfy })).text).routes;
    const compiled = compileRoutes(routes as never);
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
    const facts = { stage: 'awaiting_approval', severity: 'info', task: '', owner: '', kind: 'approval' };
    const to = (agent: string) => selectChannels(compiled.routes, { ...facts, agent }).map((t) => t.channel);
    expect(to('laptop-agent')).toEqual(['phone']); // an approval the gate asked for, report_progress over MCP
    expect(to('laptop-agent:switchboard:5f1c2d9a')).toEqual(['phone']); // a Stop or Notification signal
    expect(to('laptop-agent-2')).toEqual([]);
    expect(to('ci-agent')).toEqual([]);
  });
});

describe('planNotifyConfig on other files', () => {
  const mine = `# my gateway
server:
  port: 9000   # not the default
  public_url: https://sb.example.com

auth:
  keys:
    - { name: desk, role: agent, key_env: DESK_KEY }
    - { name: runner, role: agent, key_env: RUNNER_KEY, task_id: tsk_01 }
    - name: me
      role: approver
      key_env: ME_KEY

channels:
  team:
    type: slack
    url: https://hooks.slack.com/services/T/B/x   # team room
  mail: { type: webhook, url: "https://example.com/hook", secret_env: HOOK_SECRET }

routes:
  - { match: 'stage == "failed"', channels: [team] }
  - match: 'kind == "approval"'
    channels: [mail]
`;

  it('appends to block sections and keeps every other key, comment and style', () => {
    const plan = ok(planNotifyConfig(mine, { target: ntfy }));
    expect(addedLines(mine, plan.text)).toEqual([
      `  phone: { type: ntfy, url: 'https://ntfy.sh', topic: ${TOPIC} }`,
      `  - { match: '${agentMatch(['desk'])}', channels: [phone] }`,
    ]);
    expect(plan.warnings).toEqual([]);
    const config = load(plan.text);
    expect(Object.keys(config.channels)).toEqual(['team', 'mail', 'phone']);
    expect(config.routes).toHaveLength(3);
    expect(ok(planNotifyConfig(plan.text, { target: ntfy })).changed).toBe(false);
  });

  it('routes to an existing channel by name, for the agent keys asked for', () => {
    const plan = ok(planNotifyConfig(mine, { target: { kind: 'channel', name: 'team' }, agents: ['desk'] }));
    expect(addedLines(mine, plan.text)).toEqual([
      `  - { match: '${agentMatch(['desk'])}', channels: [team] }`,
    ]);
    expect(load(plan.text).routes).toHaveLength(3);
  });

  it('finds an ntfy channel that already has this topic under another name', () => {
    const withPhone = ok(planNotifyConfig(mine, { target: ntfy, channelName: 'pocket' })).text;
    const again = ok(planNotifyConfig(withPhone, { target: { ...ntfy } }));
    expect(again.changed).toBe(false);
    expect(again.channel).toBe('pocket');
  });

  it('appends after a multi-line last entry, before trailing comments, in a file without a final newline', () => {
    const text = `auth:
  keys:
    - name: a
      role: agent
      key_env: A
routes:
  - match: 'stage == "failed"'
    channels:
      - x
  # - { channels: [later] }
channels:
  x:
    type: webhook
    url: https://e.com/h   # the hook
    secret_env: S`;
    const plan = ok(planNotifyConfig(text, { target: ntfy }));
    expect(addedLines(text, plan.text)).toEqual([
      `  - { match: '${agentMatch(['a'])}', channels: [phone] }`,
      `  phone: { type: ntfy, url: 'https://ntfy.sh', topic: ${TOPIC} }`,
    ]);
    expect(plan.text).toContain(`      - x\n  - { match:`);
    expect(plan.text).toContain(`secret_env: S\n  phone:`);
    expect(load(plan.text).routes).toHaveLength(2);
  });

  it('creates the sections when the file has none', () => {
    const bare = 'auth:\n  keys:\n    - { name: a, role: agent, key: "0123456789abcdef0123" }\n';
    const plan = ok(planNotifyConfig(bare, { target: ntfy }));
    expect(plan.text.startsWith(bare)).toBe(true);
    expect(load(plan.text).routes).toEqual(
      routesSchema.parse([{ match: agentMatch(['a']), channels: ['phone'] }]),
    );
    const empty = ok(
      planNotifyConfig('routes:\nchannels:\nauth: { keys: [{ name: a, role: agent, key_env: A }] }\n', {
        target: ntfy,
      }),
    );
    expect(load(empty.text).channels.phone).toMatchObject({ topic: TOPIC });
  });

  it('falls back to re-printing the document for a flow section, still with every key', () => {
    const flowy =
      '# top\nauth: { keys: [{ name: a, role: agent, key_env: A }] }\nchannels: { x: { type: webhook, url: "https://e.com/h", secret_env: S } }\n';
    const plan = ok(planNotifyConfig(flowy, { target: ntfy }));
    expect(plan.text).toContain('# top');
    const config = load(plan.text);
    expect(Object.keys(config.channels)).toEqual(['x', 'phone']);
    expect(config.routes).toHaveLength(1);
  });

  it('refuses a name clash, an unknown channel or agent, and a config without an agent key, saying how to fix each', () => {
    const clash = planNotifyConfig(mine, { target: ntfy, channelName: 'team' });
    expect(clash.kind === 'invalid' && clash.problem).toMatch(
      /channels\.team already exists.*--channel-name <another name>.*--notify team/,
    );
    const unknown = planNotifyConfig(mine, { target: { kind: 'channel', name: 'pager' } });
    expect(unknown.kind === 'invalid' && unknown.problem).toMatch(
      /no channel named "pager".*there are: team, mail.*--notify https:\/\/ntfy\.sh\/<topic>/,
    );
    const agent = planNotifyConfig(mine, { target: ntfy, agents: ['runner'] });
    expect(agent.kind === 'invalid' && agent.problem).toMatch(
      /--agent runner: no agent key.*there are: desk/,
    );
    const keyless = planNotifyConfig('channels: {}\n', { target: ntfy });
    expect(keyless.kind === 'invalid' && keyless.problem).toMatch(/no agent key.*switchboard init/);
    const badUrl = planNotifyConfig(mine, { target: ntfy, publicUrl: 'laptop:8787' });
    expect(badUrl.kind === 'invalid' && badUrl.problem).toMatch(/--public-url.*not an http\(s\) URL/);
    expect(planNotifyConfig('routes: {}\n', { target: ntfy }).kind).toBe('invalid');
    expect(planNotifyConfig('a: [\n', { target: ntfy }).kind).toBe('invalid');
  });

  it('warns about a short topic, and refuses a plain-HTTP server unless allowed on purpose', () => {
    const http = { kind: 'ntfy' as const, url: 'http://ntfy.lan', topic: 'agents' };
    const refused = planNotifyConfig(mine, { target: http });
    expect(refused.kind === 'invalid' && refused.problem).toMatch(
      /plain HTTP.*--allow-plain-http.*"ntfy\.lan"/,
    );
    const plan = ok(planNotifyConfig(mine, { target: http, allowPlainHttp: true }));
    expect(plan.warnings.join('\n')).toMatch(/"agents" is short/);
    expect(plan.added).toContain('egress.allow "ntfy.lan" (plain HTTP on purpose)');
    expect(load(plan.text).egress.allow).toEqual(['ntfy.lan']);
    const allowed = ok(
      planNotifyConfig(`${mine}egress:\n  allow: [ntfy.lan]\n`, {
        target: { kind: 'ntfy', url: 'http://ntfy.lan', topic: 'agents-0123456789abcdef' },
      }),
    );
    expect(allowed.warnings).toEqual([]);
  });
});

describe('flow', () => {
  it('quotes only what YAML would read as something else', () => {
    expect(flow({ a: 'ntfy', b: 'true', c: 'x: y', d: "it's", e: ['p'] })).toBe(
      `{ a: ntfy, b: 'true', c: 'x: y', d: "it's", e: [p] }`,
    );
    for (const s of ['yes', '1', 'a b', '#x', "'q'", 'line\nbreak', '@x', '*x', '']) {
      expect(parseDocument(`v: ${flow(s)}`).toJS().v, s).toBe(s);
    }
  });
});
