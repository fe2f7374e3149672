import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmtpMail } from '../channel.js';
import { approvalMessage, channelCase, NOW, sampleMessage } from '../channel.case.js';
import { emailSubject, emailText } from './format.js';
import { createSmtpTransport, dotStuff, email } from './index.js';

channelCase({
  kind: email,
  rawConfig: {
    type: 'email',
    host: '127.0.0.1',
    port: 2525,
    from: 'switchboard@example.com',
    to: ['owner@example.com'],
  },
  secrets: {},
  text: emailText,
  wire: (m) => `${m.data}\n${emailSubject(m)}\n${emailText(m)}`,
  responses: {
    ok: { code: 250, text: '2.0.0 Ok: queued as 4BQ2Z' },
    business: { code: 550, text: '5.1.1 <nobody@example.com>: Recipient address rejected' },
    businessExpect: 'dead',
    rateLimited: { code: 451, text: '4.7.1 Greylisted, try again later' },
    serverError: { code: 421, text: '4.3.2 Service shutting down' },
  },
});

interface Received {
  from: string;
  to: string[];
  data: string;
  authed: string | undefined;
}

/**
 * A tiny SMTP server that holds the client to RFC 5321's order (EHLO before MAIL, MAIL before
 * RCPT, a recipient before DATA), checks AUTH PLAIN, un-dot-stuffs DATA and stores the message.
 */
const CERT = readFileSync(new URL('./fixtures/test-cert.pem', import.meta.url));
const KEY = readFileSync(new URL('./fixtures/test-key.pem', import.meta.url));

function smtpServer(opts: { auth?: { user: string; pass: string }; greylist?: boolean; starttls?: boolean }) {
  const inbox: Received[] = [];
  const server: Server = createServer((plain: Socket) => {
    let sock: Socket = plain;
    let buf = '';
    let state: 'start' | 'ehlo' | 'mail' | 'rcpt' | 'data' = 'start';
    let authed: string | undefined;
    let tls = false;
    let cur: Received = { from: '', to: [], data: '', authed: undefined };
    const dataLines: string[] = [];
    const say = (line: string) => sock.write(`${line}\r\n`);
    say('220 localhost ESMTP test');
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let i = buf.indexOf('\r\n');
      while (i >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        i = buf.indexOf('\r\n');
        if (state === 'data') {
          if (line === '.') {
            cur.data = dataLines.splice(0).join('\r\n');
            inbox.push({ ...cur, authed });
            state = 'ehlo';
            say('250 2.0.0 Ok: queued as Q1');
          } else dataLines.push(line.startsWith('.') ? line.slice(1) : line);
          continue;
        }
        const [verb = ''] = line.split(/[ :]/);
        switch (verb.toUpperCase()) {
          case 'EHLO':
            state = 'ehlo';
            say('250-localhost');
            if (opts.starttls && !tls) say('250-STARTTLS');
            say('250-AUTH PLAIN LOGIN');
            say('250 8BITMIME');
            break;
          case 'STARTTLS':
            say('220 2.0.0 Ready to start TLS');
            plain.off('data', onData);
            sock = new TLSSocket(plain, { isServer: true, cert: CERT, key: KEY });
            sock.on('data', onData);
            tls = true;
            state = 'start'; // RFC 3207: forget everything said before the handshake
            authed = undefined;
            break;
          case 'AUTH': {
            const [, mech, token] = line.split(' ');
            const [, u, p] = Buffer.from(token ?? '', 'base64')
              .toString('utf8')
              .split('\0');
            if (opts.starttls && !tls)
              say('538 5.7.11 Encryption required for requested authentication mechanism');
            else if (mech === 'PLAIN' && u === opts.auth?.user && p === opts.auth?.pass) {
              authed = u;
              say('235 2.7.0 Authentication successful');
            } else say('535 5.7.8 Authentication credentials invalid');
            break;
          }
          case 'MAIL':
            if (state !== 'ehlo') say('503 5.5.1 Error: send HELO/EHLO first');
            else if (opts.auth && !authed) say('530 5.7.0 Authentication required');
            else {
              cur = { from: /<(.*)>/.exec(line)?.[1] ?? '', to: [], data: '', authed };
              state = 'mail';
              say('250 2.1.0 Ok');
            }
            break;
          case 'RCPT': {
            const rcpt = /<(.*)>/.exec(line)?.[1] ?? '';
            if (state !== 'mail' && state !== 'rcpt') say('503 5.5.1 Error: need MAIL command');
            else if (opts.greylist) say('451 4.7.1 Greylisted, try again later');
            else if (rcpt.endsWith('@nowhere.invalid'))
              say(`550 5.1.1 <${rcpt}>: Recipient address rejected`);
            else {
              cur.to.push(rcpt);
              state = 'rcpt';
              say('250 2.1.5 Ok');
            }
            break;
          }
          case 'DATA':
            if (state !== 'rcpt') say('503 5.5.1 Error: need RCPT command');
            else {
              state = 'data';
              say('354 End data with <CR><LF>.<CR><LF>');
            }
            break;
          case 'QUIT':
            say('221 2.0.0 Bye');
            sock.end();
            break;
          default:
            say('502 5.5.2 Error: command not recognized');
        }
      }
    };
    plain.on('data', onData);
  });
  return {
    inbox,
    start: () =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('email over SMTP against a local SMTP server', () => {
  let srv: ReturnType<typeof smtpServer>;
  afterEach(() => srv.close());
  const noPost = async () => {
    throw new Error('email does not use HTTP');
  };
  const secrets: Record<string, string> = { SMTP_USER: 'bot', SMTP_PASS: 'p@ss wörd' };
  const deps = {
    post: noPost,
    now: () => NOW,
    secret: (e: string) => secrets[e],
    smtp: createSmtpTransport({ timeoutMs: 5000 }),
  };
  const config = (port: number, extra: Record<string, unknown> = {}) =>
    email.configSchema.parse({
      type: 'email',
      host: '127.0.0.1',
      port,
      from: 'sb@example.com',
      to: ['owner@example.com', 'ops@example.com'],
      ...extra,
    });

  it('authenticates with AUTH PLAIN, delivers to every recipient and gets the queue id', async () => {
    srv = smtpServer({ auth: { user: 'bot', pass: 'p@ss wörd' } });
    const port = await srv.start();
    const res = await email.send(
      approvalMessage({ locale: 'zh' }),
      config(port, { username_env: 'SMTP_USER', password_env: 'SMTP_PASS' }),
      deps,
    );
    expect(res).toEqual({ kind: 'ok', providerId: 'Q1' });
    const got = srv.inbox[0];
    expect(got).toMatchObject({
      from: 'sb@example.com',
      to: ['owner@example.com', 'ops@example.com'],
      authed: 'bot',
    });
    expect(got?.data).toContain('Message-ID: <evt_01JDZ3R5W8XK2M4N6P8Q0S2T4V@example.com>');
    const mail = { data: got?.data ?? '' } as SmtpMail;
    expect(emailSubject(mail)).toBe('[警告] 等待审批 · Run the production migration');
    expect(emailText(mail)).toContain(
      '打开审批页面: https://sb.example/console/approvals/apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
    );
  });

  it('is dead on wrong credentials and on a rejected recipient, and retries a greylisting 451', async () => {
    srv = smtpServer({ auth: { user: 'bot', pass: 'other' } });
    const port = await srv.start();
    const auth = { username_env: 'SMTP_USER', password_env: 'SMTP_PASS' };
    expect(await email.send(sampleMessage(), config(port, auth), deps)).toMatchObject({
      kind: 'dead',
      reason: expect.stringContaining('535'),
    });
    await srv.close();
    srv = smtpServer({});
    const port2 = await srv.start();
    const nowhere = config(port2, { to: ['x@nowhere.invalid'] });
    expect(await email.send(sampleMessage(), nowhere, deps)).toMatchObject({
      kind: 'dead',
      reason: expect.stringContaining('550'),
    });
    await srv.close();
    srv = smtpServer({ greylist: true });
    const port3 = await srv.start();
    expect((await email.send(sampleMessage(), config(port3), deps)).kind).toBe('retry');
  });

  it('dot-stuffs lines that start with a full stop so the message arrives unchanged', async () => {
    srv = smtpServer({});
    const port = await srv.start();
    const data = 'Subject: dots\r\n\r\n.hidden line\r\n.\r\nlast';
    const mail: SmtpMail = {
      host: '127.0.0.1',
      port,
      from: 'a@example.com',
      to: ['b@example.com'],
      data,
      starttls: 'never',
      heloName: 'test',
    };
    expect((await createSmtpTransport({ timeoutMs: 5000 })(mail, () => undefined)).code).toBe(250);
    expect(srv.inbox[0]?.data).toBe(data);
    expect(dotStuff('.a\r\nb')).toBe('..a\r\nb\r\n.\r\n');
  });

  it('upgrades with STARTTLS, checks the certificate, then authenticates inside TLS', async () => {
    srv = smtpServer({ starttls: true, auth: { user: 'bot', pass: 'p@ss wörd' } });
    const port = await srv.start();
    const cfg = config(port, { starttls: 'required', username_env: 'SMTP_USER', password_env: 'SMTP_PASS' });
    const trusted = { ...deps, smtp: createSmtpTransport({ timeoutMs: 5000, ca: CERT }) };
    expect(await email.send(sampleMessage(), cfg, trusted)).toEqual({ kind: 'ok', providerId: 'Q1' });
    expect(srv.inbox[0]?.authed).toBe('bot');
    // Without the test CA the self-signed certificate is refused and nothing is sent.
    expect((await email.send(sampleMessage(), cfg, deps)).kind).toBe('retry');
    expect(srv.inbox).toHaveLength(1);
  });

  it('refuses to send when STARTTLS is required and the server does not offer it', async () => {
    srv = smtpServer({});
    const port = await srv.start();
    const res = await email.send(sampleMessage(), config(port, { starttls: 'required' }), deps);
    expect(res).toEqual({
      kind: 'dead',
      reason: 'SMTP 554: STARTTLS is required but the server does not offer it',
    });
    expect(srv.inbox).toHaveLength(0);
  });

  it('retries when nothing listens on the port', async () => {
    srv = smtpServer({});
    const port = await srv.start();
    await srv.close();
    srv = { inbox: [], start: async () => 0, close: async () => {} };
    expect(await email.send(sampleMessage(), config(port), deps)).toEqual({
      kind: 'retry',
      error: 'network error (ECONNREFUSED)',
    });
  });
});
