import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ProcessSpec, startProcess } from './process.js';
import { Spawner } from './spawner.js';
import { waitFor } from './testing.js';

const BUILT = fileURLToPath(new URL('../../dist/tasks/process.js', import.meta.url));

let dir: string;
let spawner: Spawner;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-spawner-'));
  writeFileSync(join(dir, 'input'), 'the input');
  spawner = new Spawner();
});
afterEach(() => {
  spawner.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A node child running `script`, its stdin the input file and its output in `dir`. */
const spec = (script: string, env: Record<string, string> = {}): ProcessSpec => ({
  argv: [process.execPath, '-e', script],
  cwd: dir,
  env,
  stdinFile: join(dir, 'input'),
  logDir: dir,
});
const stdout = () => readFileSync(join(dir, 'stdout.log'), 'utf8');

describe('the spawner helper', () => {
  it('forks the agent itself, hands it the input as stdin and exactly its env, and reports its exit code', async () => {
    process.env.SB_SPAWNER_TEST_SECRET = 'not for agents';
    try {
      const s = await spawner.spawn(
        spec(
          `let b='';process.stdin.on('data',d=>b+=d).on('end',()=>{console.log(JSON.stringify({ppid:process.ppid,input:b,env:process.env}));process.exit(3)})`,
          { ONLY: 'this' },
        ),
      );
      if (!s.ok) throw new Error(s.error);
      expect(await s.exited).toEqual({ kind: 'exited', code: 3, signal: null });
      const seen = JSON.parse(stdout()) as { ppid: number; input: string; env: Record<string, string> };
      expect(seen.ppid).not.toBe(process.pid);
      expect(seen.input).toBe('the input');
      expect(seen.env.ONLY).toBe('this');
      expect(seen.env.SB_SPAWNER_TEST_SECRET).toBeUndefined();
    } finally {
      delete process.env.SB_SPAWNER_TEST_SECRET;
    }
  });

  it('reports the signal that ended a child, sent by the gateway to its process group', async () => {
    const s = await spawner.spawn(spec('setInterval(() => {}, 1000)'));
    if (!s.ok) throw new Error(s.error);
    process.kill(-s.pid, 'SIGTERM');
    expect(await s.exited).toEqual({ kind: 'exited', code: null, signal: 'SIGTERM' });
  });

  it('answers a program that cannot be executed with the reason, and a missing input file too', async () => {
    const missing = await spawner.spawn({ ...spec(''), argv: [join(dir, 'no-such-agent')] });
    expect(missing).toEqual({
      ok: false,
      error: `could not start ${join(dir, 'no-such-agent')}: spawn ${join(dir, 'no-such-agent')} ENOENT`,
    });
    const noInput = await spawner.spawn({ ...spec(''), stdinFile: join(dir, 'gone') });
    expect(noInput.ok).toBe(false);
    expect((noInput as { error: string }).error).toMatch(/^could not start .*ENOENT/);
  });

  it('watches a running child by its pid once the helper dies, and forks a new helper for the next', async () => {
    const s = await spawner.spawn(spec('console.log(process.ppid); setTimeout(() => {}, 400)'));
    if (!s.ok) throw new Error(s.error);
    await waitFor(() => stdout().trim().length > 0);
    const helper = Number(stdout().trim());
    process.kill(helper, 'SIGKILL');
    const exit = await s.exited;
    expect(exit.kind).toBe('lost');
    expect((exit as { error: string }).error).toMatch(
      /spawner helper exited \(SIGKILL\).*exit code is unknown/,
    );
    const next = await spawner.spawn(spec('process.exit(0)'));
    if (!next.ok) throw new Error(next.error);
    expect(await next.exited).toEqual({ kind: 'exited', code: 0, signal: null });
  });

  it('starts many children at once, each answered with its own pid and exit', async () => {
    const all = await Promise.all(
      Array.from({ length: 8 }, (_, i) => spawner.spawn(spec(`process.exit(${i})`))),
    );
    const exits = await Promise.all(
      all.map((s) => {
        if (!s.ok) throw new Error(s.error);
        return s.exited;
      }),
    );
    expect(new Set(all.map((s) => (s.ok ? s.pid : 0))).size).toBe(8);
    expect(exits.map((e) => (e.kind === 'exited' ? e.code : -1))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  // The build's copy (npm test builds first): a process of its own, so its event loop is the helper's only other user.
  it.runIf(existsSync(BUILT))(
    'keeps a process alive while a child runs, and lets it exit once the child has',
    () => {
      const script = `
      import { startProcess } from ${JSON.stringify(BUILT)};
      const s = await startProcess({ argv: [process.execPath, '-e', 'setTimeout(() => {}, 300)'], cwd: ${JSON.stringify(dir)},
        env: {}, stdinFile: ${JSON.stringify(join(dir, 'input'))}, logDir: ${JSON.stringify(dir)} });
      s.process.exited.then((e) => console.log(JSON.stringify(e)));`;
      const t0 = Date.now();
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 15_000,
      });
      expect(JSON.parse(out)).toEqual({ kind: 'exited', code: 0, signal: null });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    },
  );

  it('answers as the fork from the gateway itself does (startProcess(spec, "inline"))', async () => {
    for (const from of ['helper', 'inline'] as const) {
      const ran = await startProcess(spec('process.exit(5)'), from);
      if (!ran.ok) throw new Error(ran.error);
      expect(await ran.process.exited).toEqual({ kind: 'exited', code: 5, signal: null });
      const missing = await startProcess({ ...spec(''), argv: [join(dir, 'nope')] }, from);
      expect(missing).toEqual({
        ok: false,
        error: `could not start ${join(dir, 'nope')}: spawn ${join(dir, 'nope')} ENOENT`,
      });
    }
  });
});
