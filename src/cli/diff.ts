/** A unified diff of two texts, line by line, for `--dry-run` output. Small inputs only (settings files). */

const CONTEXT = 3;

type Op = { kind: ' ' | '-' | '+'; line: string };

function ops(a: string[], b: string[]): Op[] {
  // Longest common subsequence table; settings files are a few hundred lines at most.
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ kind: ' ', line: a[i]! });
      i++;
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push({ kind: '-', line: a[i]! });
      i++;
    } else {
      out.push({ kind: '+', line: b[j]! });
      j++;
    }
  }
  return out;
}

const split = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

export function unifiedDiff(before: string, after: string, path: string, existed: boolean): string {
  const all = ops(split(before), split(after));
  if (all.every((o) => o.kind === ' ')) return '';
  // git's a/ and b/ prefixes read well on a relative path; an absolute one is shown as it is.
  const [a, b] = path.startsWith('/') ? [path, path] : [`a/${path}`, `b/${path}`];
  const lines = [`--- ${existed ? a : '/dev/null'}`, `+++ ${b}`];
  let k = 0;
  while (k < all.length) {
    if (all[k]!.kind === ' ') {
      k++;
      continue;
    }
    // A hunk: from CONTEXT lines before this change to CONTEXT lines after the last change near it.
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    while (end < all.length) {
      let next = end;
      while (next < all.length && all[next]!.kind === ' ') next++;
      if (next >= all.length || next - end > 2 * CONTEXT) break;
      end = next + 1;
    }
    end = Math.min(all.length, end + CONTEXT);
    const oldStart = all.slice(0, start).filter((o) => o.kind !== '+').length;
    const newStart = all.slice(0, start).filter((o) => o.kind !== '-').length;
    const hunk = all.slice(start, end);
    const oldLen = hunk.filter((o) => o.kind !== '+').length;
    const newLen = hunk.filter((o) => o.kind !== '-').length;
    lines.push(
      `@@ -${oldLen ? oldStart + 1 : oldStart},${oldLen} +${newLen ? newStart + 1 : newStart},${newLen} @@`,
    );
    for (const o of hunk) lines.push(`${o.kind}${o.line}`);
    k = end;
  }
  return `${lines.join('\n')}\n`;
}
