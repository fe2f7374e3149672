import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { type TestApp, testApp } from '../server/testing.js';
import { callbacksModule } from '../callbacks/module.js';
import { type DeliveryModule, deliveryModule } from '../delivery/module.js';
import { notifyModule } from '../notify/module.js';
import { coreModule } from '../server/core-routes.js';
import { tasksModule } from '../tasks/module.js';
import { AGENT, type AgentReport, report, waitFor } from '../tasks/testing.js';
import { approvalsModule } from '../approvals/module.js';
import { tasksPort } from '../tasks/port.js';
import { repliesModule } from './module.js';
import { replyKeyOf } from './key.js';
import { signReply } from './token.js';

/**
 * Replies end to end with real parts: a real agent process launched as a command task, the notify
 * path and the delivery engine sending to a local Telegram Bot API receiver, the relay recording the
 * message id, and replies (the signed page and a Telegram reply) resuming the session through the
 * configured resume argv, whose stand-in agent records argv and stdin.
 */

const BOT_TOKEN = '123456:bot-token-for-tests';
const SLACK_BOT = 'xoxb-slack-bot-token-for-tests';
const SLACK_SIGNING = 'slack-signing-secret-for-tests';
const SLACK_CHANNEL = 'C0123ABCD';
const TG_SECRET = 'tg-webhook-secret_for-tests';
const CHAT_ID = 4242;
const SESSION = 'sess-7f3a9c';
const HOSTILE = '$(rm -rf /); --flag `id` && echo "pwned" \'x\' <b>bold</b>';

type Json = Record<string, unknown>;

/**
 * A local Bot API `sendMessage`: checks what the Bot API documents (token in the path, JSON body,
 * chat_id, text of 1–4096 characters, inline keyboard buttons with text and exactly one of url or
 * callback_data of at most 64 bytes) and answers `{ok, result}` or `{ok:false, error_code, description}`.
 */
class TelegramReceiver {
  readonly sent: Json[] = [];
  private server: Server | undefined;
  private nextId = 500;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const answer = (status: number, body: Json) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/api/chat.postMessage') return this.slack(req, Buffer.concat(chunks), answer);
    const fail = (code: number, description: string) =>
      answer(code, { ok: false, error_code: code, description });
    if (req.method !== 'POST' || req.url !== `/bot${BOT_TOKEN}/sendMessage`) return fail(401, 'Unauthorized');
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return fail(400, 'Bad Request: unsupported content type');
    let body: Json;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
    } catch {
      return fail(400, 'Bad Request: invalid JSON');
    }
    if (body.chat_id !== CHAT_ID) return fail(400, 'Bad Request: chat not found');
    const text = body.text;
    if (typeof text !== 'string' || text.length === 0) return fail(400, 'Bad Request: message text is empty');
    if (text.length > 4096) return fail(400, 'Bad Request: message is too long');
    const markup = body.reply_markup as { inline_keyboard?: unknown } | undefined;
    if (markup !== undefined) {
      if (!Array.isArray(markup.inline_keyboard)) return fail(400, 'Bad Request: inline keyboard expected');
      for (const row of markup.inline_keyboard as unknown[]) {
        if (!Array.isArray(row)) return fail(400, 'Bad Request: keyboard row must be an array');
        for (const b of row as Json[]) {
          const kinds = ['url', 'callback_data'].filter((k) => b[k] !== undefined);
          if (typeof b.text !== 'string' || kinds.length !== 1)
            return fail(400, "Bad Request: can't parse inline keyboard button");
          if (typeof b.url === 'string' && !/^https?:\/\//.test(b.url))
            return fail(400, 'Bad Request: wrong HTTP URL');
          if (typeof b.callback_data === 'string' && Buffer.byteLength(b.callback_data) > 64)
            return fail(400, 'Bad Request: BUTTON_DATA_INVALID');
        }
      }
    }
    this.sent.push(body);
    const id = this.nextId++;
    answer(200, {
      ok: true,
      result: { message_id: id, date: 1, chat: { id: CHAT_ID, type: 'private' }, text },
    });
  }

  /**
   * Slack's chat.postMessage: a bot token in Authorization, JSON with channel and text or blocks;
   * HTTP 200 with `{ok:true, channel, ts}` or `{ok:false, error}` (Slack's Web API convention).
   */
  readonly slackSent: Json[] = [];
  private slackTs = 1_700_000_000;
  private slack(req: IncomingMessage, raw: Buffer, answer: (status: number, body: Json) => void): void {
    const body = JSON.parse(raw.toString('utf8')) as Json;
    let error: string | undefined;
    if (req.headers.authorization !== `Bearer ${SLACK_BOT}`) error = 'invalid_auth';
    else if (!(req.headers['content-type'] ?? '').startsWith('application/json')) error = 'invalid_form_data';
    else if (body.channel !== SLACK_CHANNEL) error = 'channel_not_found';
    else if (typeof body.text !== 'string' && !Array.isArray(body.blocks)) error = 'no_text';
    if (error) {
      answer(200, { ok: false, error });
      return;
    }
    this.slackSent.push(body);
    const ts = `${this.slackTs++}.000100`;
    answer(200, { ok: true, channel: SLACK_CHANNEL, ts, message: { type: 'message', text: body.text, ts } });
  }

  lastSlackTs(): string {
    return `${this.slackTs - 1}.000100`;
  }

  /** The message id and the reply button's URL of the last message sent. */
  last(): { messageId: number; replyUrl: string | undefined } {
    const body = this.sent.at(-1);
    if (!body) throw new Error('nothing was sent');
    const rows = (
      (body.reply_markup as { inline_keyboard?: Json[][] } | undefined)?.inline_keyboard ?? []
    ).flat();
    const reply = rows.find((b) => b.text === 'Reply');
    return { messageId: this.nextId - 1, replyUrl: reply?.url as string | undefined };
  }
}

const receiver = new TelegramReceiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

interface Booted {
  t: TestApp;
  delivery: DeliveryModule;
  workDir: string;
}

/** A gateway with the modules a reply needs, the given channels routed, and the fake agent as resume argv. */
async function boot(
  dialect: Awaited<ReturnType<typeof dialects>>[number],
  clock: { now: number },
  channels: Json,
  callbacks: Json,
): Promise<Booted> {
  const workDir = mkdtempSync(join(tmpdir(), 'sb-replies-'));
  const delivery = deliveryModule({ workers: false, env: { TG_BOT: BOT_TOKEN, SLACK_BOT } });
  const secrets: Record<string, string> = { TG_SECRET, SLACK_SIGNING };
  const t = await testApp({
    dialect,
    now: () => clock.now,
    config: {
      server: { public_url: 'https://sb.example' },
      egress: { allow: ['127.0.0.1'] },
      channels,
      routes: [{ channels: Object.keys(channels) }],
      notify: { rate_per_minute: 1000 },
    },
    modules: [
      coreModule(),
      delivery,
      approvalsModule({ expiryWorker: false }),
      callbacksModule({ config: callbacks, secrets: (env) => secrets[env] }),
      tasksModule({
        runSupervisor: false,
        env: { PATH: process.env.PATH ?? '' },
        config: {
          work_dir: workDir,
          kill_grace_seconds: 0.2,
          // The stand-in agent as the resume command: argv says which session, stdin carries the reply.
          resume: { 'claude-code': [process.execPath, AGENT, 'ok', '--resume', '{{session_id}}'] },
        },
      }),
      notifyModule(),
      repliesModule(),
    ],
  });
  return { t, delivery, workDir };
}

/** A headless task that ran and finished, whose hooks told us its runtime session. */
async function finishedTask(t: TestApp, mode: 'ok' | 'hang' = 'ok'): Promise<string> {
  const tasks = t.port(tasksPort);
  const cause = await t.services.emit({ type: 'integration.webhook.admitted' });
  const view = await tasks.launch({
    trigger_id: 'fix-build',
    action: { type: 'command', command: [process.execPath, AGENT, mode], runtime: 'claude-code' },
    trusted: {},
    untrusted: { ref: 'vlt_test', digest: 'sha256:abc', text: 'The build is red.' },
    owner: 'alice',
    title: 'Fix the build',
    cause,
  });
  await tasks.touch(view.id, { session_id: SESSION, runtime: 'claude-code' });
  if (mode === 'ok') await waitFor(async () => (await tasks.get(view.id))?.state === 'completed');
  return view.id;
}

/** The agent reports `done`; the engine sends it, and the relay records the provider's message id. */
async function reportDone(
  b: Booted,
  taskId: string,
  sent: () => number,
  summary = 'Fixed the flaky test',
): Promise<void> {
  const before = sent();
  const res = await b.t.app.request('/v1/progress', {
    method: 'POST',
    headers: {
      authorization: 'Bearer agent-key-0123456789abcdef',
      'content-type': 'application/json',
      'x-switchboard-task': taskId,
    },
    body: JSON.stringify({ stage: 'done', summary, severity: 'info' }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as Json).status).toBe('sent');
  for (let i = 0; i < 20 && sent() === before; i++) await b.delivery.engine()!.runOnce();
  expect(sent()).toBe(before + 1);
  await b.t.services.relay.drain();
}

/** Waits for the resumed agent's report (argv, stdin) and for the task to finish again. */
async function resumedReport(b: Booted, taskId: string, act: () => Promise<void>): Promise<AgentReport> {
  rmSync(join(b.workDir, taskId, 'report.json'), { force: true });
  await act();
  const r = await report<AgentReport>(b.workDir, taskId);
  await waitFor(async () => (await b.t.port(tasksPort).get(taskId))?.state === 'completed');
  return r;
}

describe.each(await dialects())('replies from the phone on %s', (dialect) => {
  let b: Booted;
  let t: TestApp;
  let workDir: string;
  const clock = { now: Date.now() };

  beforeEach(async () => {
    clock.now = Date.now();
    b = await boot(
      dialect,
      clock,
      { phone: { type: 'telegram', token_env: 'TG_BOT', chat_id: CHAT_ID, api_url: receiver.url } },
      { telegram: { phone: { secret_token_env: 'TG_SECRET', allowed_user_ids: [777] } } },
    );
    t = b.t;
    workDir = b.workDir;
  });
  afterEach(async () => {
    await t.cleanup();
    rmSync(workDir, { recursive: true, force: true });
  });

  const tasks = () => t.port(tasksPort);
  const telegramDone = async (id: string, summary?: string) => {
    await reportDone(b, id, () => receiver.sent.length, summary);
    return receiver.last();
  };

  const postReply = (url: string, message: string | null, type = 'application/x-www-form-urlencoded') =>
    t.app.request(new URL(url).pathname, {
      method: 'POST',
      headers: { 'content-type': type },
      body: message === null ? '' : new URLSearchParams({ message }).toString(),
    });

  const telegramUpdate = (update: Json, secret = TG_SECRET) =>
    t.app.request('/v1/callbacks/telegram/phone', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
      body: JSON.stringify(update),
    });
  const replyUpdate = (
    updateId: number,
    replyTo: number,
    text: string,
    over: { chat?: number; from?: number } = {},
  ) => ({
    update_id: updateId,
    message: {
      message_id: 9000 + updateId,
      date: 1,
      from: { id: over.from ?? 777, is_bot: false, first_name: 'Alice' },
      chat: { id: over.chat ?? CHAT_ID, type: 'private' },
      text,
      reply_to_message: {
        message_id: replyTo,
        date: 1,
        chat: { id: CHAT_ID, type: 'private' },
        text: 'Done',
      },
    },
  });

  const replyEvents = async () =>
    (await t.services.log.list({ type: 'agent.reply.received' })).map((e) => e.envelope);

  it('a reply on the signed page resumes the session with the text as data, once', async () => {
    const id = await finishedTask(t);
    const { replyUrl } = await telegramDone(id);
    expect(replyUrl).toMatch(/^https:\/\/sb\.example\/r\//);
    const path = new URL(replyUrl!).pathname;

    // GET shows the form and changes nothing.
    const page = await t.app.request(path);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<textarea');
    expect(html).toContain('Fix the build');
    expect((await tasks().get(id))?.state).toBe('completed');

    const r = await resumedReport(b, id, async () => {
      const res = await postReply(replyUrl!, HOSTILE);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('Reply sent');
    });
    // The session comes from the signed token; the text only on stdin and in the input file.
    expect(r.argv).toEqual(['ok', '--resume', SESSION]);
    expect(r.stdin.endsWith(HOSTILE)).toBe(true);
    expect(r.input.endsWith(HOSTILE)).toBe(true);
    expect(r.stdin).toContain('reply-link:phone');
    expect(JSON.stringify(r.argv)).not.toContain('rm -rf');

    // Used twice: nothing happens the second time.
    const again = await postReply(replyUrl!, 'second try');
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('already used');
    const reload = await t.app.request(path);
    expect(reload.status).toBe(200);
    expect(await reload.text()).toContain('already used');

    // The audit says who and where, never the text.
    const events = await replyEvents();
    expect(events.map((e) => e.redacted_summary.outcome)).toEqual(['resumed', 'used']);
    expect(events[0]).toMatchObject({
      execution: { task_id: id, session_id: SESSION },
      redacted_summary: { via: 'link', channel: 'phone', by: 'reply-link:phone', chars: HOSTILE.length },
    });
    const log = JSON.stringify(await t.services.log.list({ limit: 1000 }));
    expect(log).not.toContain('rm -rf');
    const resumed = (await t.services.log.list({ type: 'agent.task.resumed' })).map((e) => e.envelope);
    expect(resumed[0]?.redacted_summary).toMatchObject({ by: 'reply-link:phone', role: 'approver' });
  }, 30_000);

  it('a Telegram reply to the message resumes the session; a redelivered update does not resume twice', async () => {
    const id = await finishedTask(t);
    const { messageId } = await telegramDone(id);
    const delivered = (await t.services.log.list({ type: 'integration.delivery.succeeded' })).at(-1)!;
    expect(delivered.envelope.redacted_summary.provider_id).toBe(String(messageId));

    const update = replyUpdate(1, messageId, HOSTILE);
    const r = await resumedReport(b, id, async () => {
      const res = await telegramUpdate(update);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        method: 'sendMessage',
        chat_id: String(CHAT_ID),
        text: expect.stringContaining('resumed'),
        reply_parameters: { message_id: 9001 },
      });
    });
    expect(r.argv).toEqual(['ok', '--resume', SESSION]);
    expect(r.stdin.endsWith(HOSTILE)).toBe(true);
    expect(r.stdin).toContain('telegram:777');
    // The resumed run's `done` is news again: it is sent, with a reply target of its own.
    await t.services.relay.drain();
    const next = await telegramDone(id, 'Ran the linter too');
    expect(next.messageId).toBe(messageId + 1);
    expect(next.replyUrl).toMatch(/^https:\/\/sb\.example\/r\//);

    // Telegram redelivers the same update: answered 200, nothing resumed.
    const again = await telegramUpdate(update);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('');
    // A new reply to the same message is a new instruction and resumes again.
    const second = await resumedReport(b, id, async () => {
      expect((await telegramUpdate(replyUpdate(2, messageId, 'and run the linter'))).status).toBe(200);
    });
    expect(second.stdin.endsWith('and run the linter')).toBe(true);
    const outcomes = (await replyEvents()).map((e) => [e.redacted_summary.via, e.redacted_summary.outcome]);
    expect(outcomes).toEqual([
      ['telegram', 'resumed'],
      ['telegram', 'used'],
      ['telegram', 'resumed'],
    ]);
  }, 30_000);

  it('ignores replies to unknown messages, from another chat or user, and unsigned updates', async () => {
    const id = await finishedTask(t);
    const { messageId } = await telegramDone(id);
    const unknown = await telegramUpdate(replyUpdate(10, 31337, 'hello'));
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toBe('');
    const otherChat = await telegramUpdate(replyUpdate(11, messageId, 'hello', { chat: 999 }));
    expect(otherChat.status).toBe(200);
    expect(await otherChat.text()).toBe('');
    const otherUser = await telegramUpdate(replyUpdate(12, messageId, 'hello', { from: 888 }));
    expect(await otherUser.text()).toBe('');
    const bot = replyUpdate(13, messageId, 'hello');
    (bot.message.from as Json).is_bot = true;
    expect(await (await telegramUpdate(bot)).text()).toBe('');
    const forged = await telegramUpdate(replyUpdate(14, messageId, 'hello'), 'wrong-secret');
    expect(forged.status).toBe(401);
    expect(await replyEvents()).toEqual([]);
    expect((await t.services.log.list({ type: 'agent.task.resumed' })).length).toBe(0);
  }, 30_000);

  it('refuses forged, expired and non-form replies without changing anything', async () => {
    const id = await finishedTask(t);
    const { replyUrl } = await telegramDone(id);
    const path = new URL(replyUrl!).pathname;
    const [payload, mac] = path.slice('/r/'.length).split('.');
    const forgedMac = `${mac!.slice(0, -2)}${mac!.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = await postReply(`https://sb.example/r/${payload}.${forgedMac}`, 'hi');
    expect(forged.status).toBe(401);
    expect(await forged.text()).toContain('not valid');
    expect((await t.app.request(`/r/${payload}.${forgedMac}`)).status).toBe(401);
    // An approval-style token is not a reply token.
    expect((await t.app.request('/r/apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V.1.abc')).status).toBe(401);

    expect((await postReply(replyUrl!, 'hi', 'application/json')).status).toBe(415);
    expect((await postReply(replyUrl!, '   ')).status).toBe(400);

    clock.now += 86_400_000 + 1;
    const expired = await postReply(replyUrl!, 'hi');
    expect(expired.status).toBe(410);
    expect((await t.app.request(path)).status).toBe(410);
    // Expired as a Telegram reply too: told so, nothing resumed.
    const { messageId } = receiver.last();
    const tg = await telegramUpdate(replyUpdate(20, messageId, 'late'));
    expect(((await tg.json()) as Json).text).toContain('expired');
    expect((await t.services.log.list({ type: 'agent.task.resumed' })).length).toBe(0);
    expect(existsSync(join(workDir, id))).toBe(true);
  }, 30_000);

  it('a reply while the task still runs shows why and leaves the link usable', async () => {
    const id = await finishedTask(t, 'hang');
    const token = signReply(replyKeyOf(t.services), {
      task_id: id,
      session_id: SESSION,
      channel: 'phone',
      expires_at: clock.now + 60_000,
    });
    const res = await postReply(`https://sb.example/r/${token}`, 'keep going');
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('still running');
    // Nothing was used up: the page still shows the form.
    expect(await (await t.app.request(`/r/${token}`)).text()).toContain('<textarea');
    expect((await replyEvents()).map((e) => e.redacted_summary.outcome)).toEqual(['refused']);

    // A token for a session the task has left is refused too.
    const stale = signReply(replyKeyOf(t.services), {
      task_id: id,
      session_id: 'sess-old',
      channel: 'phone',
      expires_at: clock.now + 60_000,
    });
    const old = await postReply(`https://sb.example/r/${stale}`, 'keep going');
    expect(old.status).toBe(409);
    expect(await old.text()).toContain('another session');
  }, 30_000);
});

describe.each(await dialects())('Slack thread replies on %s', (dialect) => {
  let b: Booted;
  const clock = { now: Date.now() };

  beforeEach(async () => {
    clock.now = Date.now();
    b = await boot(
      dialect,
      clock,
      {
        ops: {
          type: 'slack',
          token_env: 'SLACK_BOT',
          channel: SLACK_CHANNEL,
          api_url: `${receiver.url}/api/chat.postMessage`,
        },
      },
      {
        slack: {
          ops: { signing_secret_env: 'SLACK_SIGNING', allowed_user_ids: ['U0ALICE'], team_id: 'T0001' },
        },
      },
    );
  });
  afterEach(async () => {
    await b.t.cleanup();
    rmSync(b.workDir, { recursive: true, force: true });
  });

  const signed = (body: string, opts: { secret?: string; retry?: string } = {}) => {
    const ts = String(Math.floor(clock.now / 1000));
    const sig = createHmac('sha256', opts.secret ?? SLACK_SIGNING)
      .update(`v0:${ts}:${body}`)
      .digest('hex');
    return b.t.app.request('/v1/callbacks/slack/ops/events', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-slack-request-timestamp': ts,
        'x-slack-signature': `v0=${sig}`,
        ...(opts.retry ? { 'x-slack-retry-num': opts.retry, 'x-slack-retry-reason': 'http_timeout' } : {}),
      },
      body,
    });
  };
  const threadReply = (eventId: string, threadTs: string, text: string, event: Json = {}) =>
    JSON.stringify({
      token: 'legacy',
      team_id: 'T0001',
      api_app_id: 'A0001',
      type: 'event_callback',
      event_id: eventId,
      event_time: 1,
      event: {
        type: 'message',
        channel: SLACK_CHANNEL,
        user: 'U0ALICE',
        text,
        ts: '1700009999.000200',
        thread_ts: threadTs,
        channel_type: 'channel',
        ...event,
      },
    });

  it('answers the url_verification challenge only when signed', async () => {
    const body = JSON.stringify({ token: 'x', challenge: 'abc123', type: 'url_verification' });
    const ok = await signed(body);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ challenge: 'abc123' });
    expect((await signed(body, { secret: 'wrong' })).status).toBe(401);
  });

  it('a reply in the thread of our message resumes the session once; bots, edits and others are ignored', async () => {
    const id = await finishedTask(b.t);
    await reportDone(b, id, () => receiver.slackSent.length);
    const ts = receiver.lastSlackTs();
    const posted = receiver.slackSent.at(-1)!;
    expect(JSON.stringify(posted.blocks)).toContain('https://sb.example/r/');

    // Not ours or not a person's reply: 200, nothing resumed.
    for (const body of [
      threadReply('Ev01', '1600000000.000100', 'unknown thread'),
      threadReply('Ev02', ts, 'from a bot', { bot_id: 'B01', subtype: 'bot_message' }),
      threadReply('Ev03', ts, 'an edit', { subtype: 'message_changed' }),
      threadReply('Ev04', ts, 'someone else', { user: 'U0MALLORY' }),
      threadReply('Ev05', ts, 'another channel', { channel: 'C0OTHER' }),
      threadReply('Ev06', ts, 'the parent itself', { ts }),
    ]) {
      const res = await signed(body);
      expect(res.status).toBe(200);
    }
    expect((await b.t.services.log.list({ type: 'agent.task.resumed' })).length).toBe(0);

    const body = threadReply('Ev10', ts, HOSTILE);
    const r = await resumedReport(b, id, async () => {
      expect((await signed(body)).status).toBe(200);
    });
    expect(r.argv).toEqual(['ok', '--resume', SESSION]);
    expect(r.stdin.endsWith(HOSTILE)).toBe(true);
    expect(r.stdin).toContain('slack:U0ALICE');
    // Slack retries the same event: 200, not resumed twice.
    expect((await signed(body, { retry: '1' })).status).toBe(200);
    const outcomes = (await b.t.services.log.list({ type: 'agent.reply.received' })).map((e) => [
      e.envelope.redacted_summary.via,
      e.envelope.redacted_summary.outcome,
    ]);
    expect(outcomes).toEqual([
      ['slack', 'resumed'],
      ['slack', 'used'],
    ]);
    expect((await b.t.services.log.list({ type: 'agent.task.resumed' })).length).toBe(1);
  }, 30_000);
});
