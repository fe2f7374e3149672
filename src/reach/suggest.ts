/**
 * "did you mean ticket.query": the registered names nearest to a typo, so a model's next call is
 * right instead of a second guess. Optimal string alignment distance (Levenshtein plus swapped
 * neighbours, the commonest typo), case-insensitive; a name that contains the typed one (or the
 * other way round) counts as near too, so `query` finds `ticket.query`.
 */

export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  if (m === 0) return n;
  if (n === 0) return m;
  let prev2: number[] = [];
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, prev2[j - 2]! + 1);
      cur.push(v);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[n]!;
}

/** Up to `max` names, nearest first; none when nothing is plausibly what was meant. */
export function nearestNames(wanted: string, names: readonly string[], max = 3): string[] {
  const w = wanted.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  for (const name of names) {
    const n = name.toLowerCase();
    let score = editDistance(w, n);
    // A third of the longer name, at least 2: beyond that the names are merely different.
    const limit = Math.max(2, Math.floor(Math.max(w.length, n.length) / 3));
    if (w.length >= 3 && (n.includes(w) || w.includes(n))) score = Math.min(score, 1);
    if (score <= limit) scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, max).map((s) => s.name);
}
