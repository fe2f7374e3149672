import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post } from './post.js';

/** A throwaway self-signed certificate for 127.0.0.1, or undefined where openssl is missing. */
function selfSigned(): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'sb-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the bridge POST', () => {
  const tls = selfSigned();
  it.runIf(tls !== undefined)('speaks TLS to an https gateway, and checks its certificate', async () => {
    let reached = false;
    const server = createServer(tls!, (_req, res) => {
      reached = true;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = new URL(
        `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1/runtimes/codex/hooks`,
      );
      const outcome = await post(url, new TextEncoder().encode('{}'), {}, 5_000);
      // No CA vouches for the throwaway certificate: the handshake fails on it, so the request was TLS.
      expect(outcome).toEqual({ kind: 'failed', why: 'self-signed certificate' });
      expect(reached).toBe(false);
    } finally {
      server.close();
    }
  });
});
