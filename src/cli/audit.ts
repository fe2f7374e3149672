import { verifyChain } from '../log/verify.js';
import { loadCliConfig, openExistingStore } from './context.js';

export async function verify(opts: { config?: string }): Promise<void> {
  const db = await openExistingStore(loadCliConfig(opts));
  try {
    const result = await verifyChain(db);
    if (result.ok) {
      process.stdout.write(
        `ok: ${result.count} events, chain intact; head #${result.headSeq} sha256:${result.headHash}\n`,
      );
      return;
    }
    const bad = result.firstBad;
    process.stderr.write(
      `switchboard: audit failed at event #${bad.seq}${bad.eventId ? ` (${bad.eventId})` : ''}: ${bad.detail} [${bad.problem}]; ${result.count} events before it are intact\n`,
    );
    process.exitCode = 1;
  } finally {
    await db.close();
  }
}
