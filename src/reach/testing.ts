import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { approvalsModule } from '../approvals/module.js';
import { testEgress } from '../egress/testing.js';
import { gateModule } from '../gate/module.js';
import type { Module } from '../kernel/module.js';
import { coreModule } from '../server/core-routes.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import type { Dialect } from '../store/port.js';
import { PG_URL } from '../store/testing.js';
import type { InProcessTool } from './inprocess.js';
import { reachModule } from './module.js';
import { luhn } from './redact.js';

/** Test fixtures for reach: the seed's 400-row ticket table, a local HTTP service, a real command. */

const ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];

/** An 18-digit ID card number with its real check character (GB 11643). */
export function idCard(area: string, birth: string, seq: string): string {
  const body = `${area}${birth}${seq}`;
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += Number(body[i]) * ID_WEIGHTS[i]!;
  return body + '10X98765432'[sum % 11]!;
}

/** A card number with a valid Luhn digit appended. */
export function cardNumber(prefix: string): string {
  for (let d = 0; d <= 9; d++) if (luhn(`${prefix}${d}`)) return `${prefix}${d}`;
  throw new Error('unreachable');
}

export interface Ticket {
  id: number;
  title: string;
  status: 'open' | 'pending' | 'closed';
  reporter_phone: string;
  note: string;
}

/** 400 tickets; every tenth carries an ID card number, every seventh a bank card, every fifth an email. */
export function tickets(n = 400): Ticket[] {
  const statuses = ['open', 'pending', 'closed'] as const;
  return Array.from({ length: n }, (_, i) => {
    const id = i + 1;
    const phone = `1${[3, 5, 8, 9][i % 4]}${String(80000000 + id * 7919)
      .padStart(9, '0')
      .slice(-9)}`;
    const parts = [`printer on floor ${1 + (i % 9)} jams`];
    if (id % 10 === 0)
      parts.push(
        `reporter id ${idCard('110105', `19${50 + (i % 40)}0${1 + (i % 9)}1${i % 10}`, String(100 + (i % 800)).slice(-3))}`,
      );
    if (id % 7 === 0)
      parts.push(`refund to card ${cardNumber(`62220212345678${String(id).padStart(4, '0')}`)}`);
    if (id % 5 === 0) parts.push(`cc user${id}@example.com`);
    return {
      id,
      title: `Ticket ${id}: printer jam`,
      status: statuses[i % 3]!,
      reporter_phone: phone,
      note: parts.join('; '),
    };
  });
}

export const TICKETS_DDL =
  'CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL, status TEXT NOT NULL, reporter_phone TEXT NOT NULL, note TEXT NOT NULL)';

/** A real SQLite file holding the tickets; returns its path and a cleanup. */
export function ticketsSqlite(rows = tickets()): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sb-reach-db-'));
  const path = join(dir, 'tickets.db');
  const db = new Database(path);
  db.exec(TICKETS_DDL);
  const ins = db.prepare(
    'INSERT INTO tickets (id, title, status, reporter_phone, note) VALUES (?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const t of rows) ins.run(t.id, t.title, t.status, t.reporter_phone, t.note);
  })();
  db.close();
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let schemas = 0;

/** The tickets in a schema of their own on the test PostgreSQL; the URL selects it by search_path. */
export async function ticketsPostgres(rows = tickets()): Promise<{ url: string; cleanup(): Promise<void> }> {
  const schema = `reach_${process.pid}_${Date.now().toString(36)}_${schemas++}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(`SET search_path TO "${schema}"`);
    await admin.query(TICKETS_DDL.replace('INTEGER PRIMARY KEY', 'INTEGER PRIMARY KEY'));
    const values: unknown[] = [];
    const tuples = rows.map((t, i) => {
      values.push(t.id, t.title, t.status, t.reporter_phone, t.note);
      const b = i * 5;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
    });
    await admin.query(
      `INSERT INTO tickets (id, title, status, reporter_phone, note) VALUES ${tuples.join(', ')}`,
      values,
    );
  } finally {
    await admin.end();
  }
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    url,
    async cleanup() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await c.end();
    },
  };
}

export interface Service {
  url: string;
  /** Requests seen: method, path, headers, body. */
  seen: {
    method: string;
    path: string;
    headers: Record<string, string | string[] | undefined>;
    body: string;
  }[];
  close(): Promise<void>;
}

/**
 * A local HTTP service with the endpoints the issue names: `/weather?city=` (JSON), `/slow?ms=`,
 * `/fail` (500 whose body holds a secret and a phone), `/huge?bytes=`, `/chunked` (lines over time),
 * `/redirect`, `/text`.
 */
export async function localService(): Promise<Service> {
  const seen: Service['seen'] = [];
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: `${u.pathname}${u.search}`, headers: req.headers, body });
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      switch (u.pathname) {
        case '/weather':
          return json(200, {
            city: u.searchParams.get('city'),
            temp_c: 21,
            sky: 'clear',
            contact: 'ops@weather.example',
          });
        case '/echo':
          return json(200, { method: req.method, body: body ? JSON.parse(body) : null });
        case '/slow': {
          const t = setTimeout(
            () => json(200, { slept: Number(u.searchParams.get('ms')) }),
            Number(u.searchParams.get('ms') ?? 1000),
          );
          res.on('close', () => clearTimeout(t));
          return;
        }
        case '/fail':
          res.writeHead(500, { 'content-type': 'text/plain' });
          return res.end(
            'Internal error: db password=hunter2hunter2 at conn; caller 13800138000; token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789',
          );
        case '/huge':
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end('x'.repeat(Number(u.searchParams.get('bytes') ?? 2_000_000)));
        case '/chunked': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          let i = 0;
          const tick = setInterval(() => {
            i++;
            res.write(`line ${i} call 1391234${String(5670 + i)}\n`);
            if (i === 3) {
              clearInterval(tick);
              res.end('done\n');
            }
          }, 20);
          res.on('close', () => clearInterval(tick));
          return;
        }
        case '/redirect':
          res.writeHead(302, { location: 'http://127.0.0.1:1/' });
          return res.end();
        default:
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end('plain text answer');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A real executable script in a temp dir (`#!/bin/sh`), for `command` tools. */
export function script(body: string): { path: string; dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sb-reach-cmd-'));
  const path = join(dir, 'tool.sh');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return { path, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ReachApp {
  t: TestApp;
  touch(
    body: unknown,
    role?: 'agent' | 'admin' | Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  get(
    path: string,
    role?: 'agent' | 'admin' | Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  cleanup(): Promise<void>;
}

/** An in-process app with core, approvals, the gate and reach (the egress dials loopback only). */
export async function reachApp(opts: {
  dialect?: Dialect;
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  tools?: InProcessTool[];
  gate?: boolean;
  modules?: Module[];
  /** `egress.allow` for the tools' egress (default: 127.0.0.1). */
  allow?: string[];
}): Promise<ReachApp> {
  const egress = testEgress(opts.allow ?? ['127.0.0.1']);
  const modules: Module[] = [coreModule(), approvalsModule({ expiryWorker: false })];
  if (opts.gate !== false) modules.push(gateModule({ watch: false, sighup: false }));
  modules.push(
    reachModule({ egress, env: opts.env ?? {}, ...(opts.tools ? { tools: opts.tools } : {}) }) as Module,
  );
  modules.push(...(opts.modules ?? []));
  const t = await testApp({
    dialect: opts.dialect ?? 'sqlite',
    modules,
    config: { egress: { allow: ['127.0.0.1'] }, ...opts.config },
  });
  const headers = (role: 'agent' | 'admin' | Record<string, string>) =>
    typeof role === 'string' ? auth(role) : role;
  return {
    t,
    async touch(body, role = 'agent') {
      const res = await t.app.request('/v1/touch', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers(role) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async get(path, role = 'agent') {
      const res = await t.app.request(path, { headers: headers(role) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async cleanup() {
      await t.cleanup();
      await egress.close();
    },
  };
}
