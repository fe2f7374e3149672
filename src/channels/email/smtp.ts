import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Egress } from '../../egress/index.js';
import type { SmtpMail, SmtpReply, SmtpTransport } from '../channel.js';

/**
 * A minimal SMTP client (RFC 5321) over node:net: EHLO, optional STARTTLS, optional AUTH PLAIN,
 * MAIL FROM, RCPT TO, DATA with dot-stuffing, QUIT. It returns the reply that ended the
 * transaction (250 after DATA on success, or the first negative reply); it throws only when the
 * connection fails, which `send` turns into a retry.
 */

/** One SMTP exchange should not hang a delivery worker; RFC 5321 allows minutes, our queue retries. */
export const SMTP_TIMEOUT_MS = 30_000;

/** Replies we synthesize for refusals decided here (permanent: a retry would refuse again). */
const LOCAL_REFUSAL = 554;

interface Conn {
  socket: Socket;
  read(): Promise<SmtpReply & { lines: string[] }>;
  write(line: string): void;
  detach(): void;
}

function attach(socket: Socket): Conn {
  let buf = '';
  const lines: string[] = [];
  let waiter: (() => void) | undefined;
  let failure: Error | undefined;
  const wake = () => {
    const w = waiter;
    waiter = undefined;
    w?.();
  };
  const onData = (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let i = buf.indexOf('\r\n');
    while (i >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 2);
      i = buf.indexOf('\r\n');
    }
    wake();
  };
  const onEnd = (err?: Error) => {
    failure ??= err ?? Object.assign(new Error('SMTP connection closed'), { code: 'ECONNRESET' });
    wake();
  };
  const onError = (err: Error) => onEnd(err);
  const onClose = () => onEnd();
  socket.on('data', onData);
  socket.on('error', onError);
  socket.on('close', onClose);
  const nextLine = async (): Promise<string> => {
    while (lines.length === 0) {
      if (failure) throw failure;
      await new Promise<void>((resolve) => {
        waiter = resolve;
      });
    }
    return lines.shift() as string;
  };
  return {
    socket,
    async read() {
      const got: string[] = [];
      for (;;) {
        const line = await nextLine();
        got.push(line.slice(4));
        // "250-…" continues a multi-line reply, "250 …" (or a bare code) ends it.
        if (line[3] !== '-') return { code: Number(line.slice(0, 3)), text: got.join('\n'), lines: got };
      }
    },
    write(line) {
      socket.write(`${line}\r\n`);
    },
    detach() {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    },
  };
}

/** Lines that start with "." get another "." (RFC 5321 4.5.2), and the message ends in CRLF . CRLF. */
export function dotStuff(data: string): string {
  const crlf = data.replace(/\r?\n/g, '\r\n');
  const body = crlf.endsWith('\r\n') ? crlf : `${crlf}\r\n`;
  return `${body.replace(/^\./gm, '..')}.\r\n`;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function open(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port });
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(Object.assign(new Error('SMTP timeout'), { code: 'ETIMEDOUT' })),
    );
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

function upgrade(socket: Socket, host: string, timeoutMs: number, ca: SmtpOptions['ca']): Promise<Socket> {
  return new Promise((resolve, reject) => {
    // SNI carries names only; the certificate is still checked against an IP host.
    const servername = isIP(host) ? '' : host;
    const secure = tlsConnect({ socket, host, servername, ...(ca ? { ca } : {}) }, () => {
      secure.off('error', reject);
      resolve(secure);
    });
    secure.setTimeout(timeoutMs, () =>
      secure.destroy(Object.assign(new Error('SMTP timeout'), { code: 'ETIMEDOUT' })),
    );
    secure.once('error', reject);
  });
}

export interface SmtpOptions {
  timeoutMs?: number;
  /** Extra trusted CA certificates (PEM), for a relay with a private CA; the system store is the default. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Picks the address to connect to (the egress guard); the host name is still used for TLS. */
  resolveHost?: (host: string) => Promise<string>;
}

export function createSmtpTransport(opts: SmtpOptions = {}): SmtpTransport {
  const timeoutMs = opts.timeoutMs ?? SMTP_TIMEOUT_MS;
  return async (mail, secret) => {
    const address = opts.resolveHost ? await opts.resolveHost(mail.host) : mail.host;
    let conn = attach(await open(address, mail.port, timeoutMs));
    try {
      return await transact(mail, secret, conn, async () => {
        conn.detach();
        conn = attach(await upgrade(conn.socket, mail.host, timeoutMs, opts.ca));
        return conn;
      });
    } finally {
      // end(), not destroy(): QUIT is still in the write buffer; the server closes after 221.
      conn.socket.end();
    }
  };
}

async function transact(
  mail: SmtpMail,
  secret: (env: string) => string | undefined,
  first: Conn,
  startTls: () => Promise<Conn>,
): Promise<SmtpReply> {
  let conn = first;
  let tls = false;
  const expect = async (line: string | undefined, ok: (code: number) => boolean) => {
    if (line !== undefined) conn.write(line);
    const reply = await conn.read();
    return { reply, ok: ok(reply.code) };
  };
  const is2xx = (c: number) => c >= 200 && c < 300;
  const fail = (reply: SmtpReply) => {
    conn.write('QUIT');
    return { code: reply.code, text: reply.text };
  };

  const greeting = await expect(undefined, (c) => c === 220);
  if (!greeting.ok) return fail(greeting.reply);
  let ehlo = await expect(`EHLO ${mail.heloName}`, (c) => c === 250);
  if (!ehlo.ok) return fail(ehlo.reply);
  const offersTls = () => ehlo.reply.lines.some((l) => /^STARTTLS\b/i.test(l));
  if (mail.starttls !== 'never' && offersTls()) {
    const st = await expect('STARTTLS', (c) => c === 220);
    if (!st.ok) return fail(st.reply);
    conn = await startTls();
    tls = true;
    ehlo = await expect(`EHLO ${mail.heloName}`, (c) => c === 250);
    if (!ehlo.ok) return fail(ehlo.reply);
  } else if (mail.starttls === 'required') {
    return fail({ code: LOCAL_REFUSAL, text: 'STARTTLS is required but the server does not offer it' });
  }

  if (mail.usernameEnv && mail.passwordEnv) {
    // Credentials never cross a network in clear text; loopback (a local relay) is the one exception.
    if (!tls && !LOOPBACK.has(mail.host)) {
      return fail({ code: LOCAL_REFUSAL, text: 'refusing AUTH without TLS to a non-loopback host' });
    }
    if (!ehlo.reply.lines.some((l) => /^AUTH\b.*\bPLAIN\b/i.test(l))) {
      return fail({ code: LOCAL_REFUSAL, text: 'the server does not offer AUTH PLAIN' });
    }
    const user = secret(mail.usernameEnv);
    const pass = secret(mail.passwordEnv);
    if (user === undefined || pass === undefined) {
      return fail({ code: LOCAL_REFUSAL, text: `${mail.usernameEnv} or ${mail.passwordEnv} is not set` });
    }
    const token = Buffer.from(`\0${user}\0${pass}`, 'utf8').toString('base64');
    const auth = await expect(`AUTH PLAIN ${token}`, (c) => c === 235);
    if (!auth.ok) return fail(auth.reply);
  }

  const from = await expect(`MAIL FROM:<${mail.from}>`, is2xx);
  if (!from.ok) return fail(from.reply);
  for (const rcpt of mail.to) {
    const r = await expect(`RCPT TO:<${rcpt}>`, is2xx);
    if (!r.ok) return fail(r.reply);
  }
  const data = await expect('DATA', (c) => c === 354);
  if (!data.ok) return fail(data.reply);
  conn.socket.write(dotStuff(mail.data));
  const done = await expect(undefined, () => true);
  conn.write('QUIT');
  return { code: done.reply.code, text: done.reply.text };
}

export const smtpSend: SmtpTransport = createSmtpTransport();

/**
 * The SMTP transport the delivery engine uses: it connects only to the address `egress.resolveHost`
 * vouched for (resolved and judged once, then dialled, so nothing can rebind it in between); TLS still
 * verifies the certificate against the configured host name.
 */
export function guardedSmtp(
  egress: Pick<Egress, 'resolveHost'>,
  options: Omit<SmtpOptions, 'resolveHost'> = {},
): SmtpTransport {
  return createSmtpTransport({ ...options, resolveHost: (host) => egress.resolveHost(host) });
}
