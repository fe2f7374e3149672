import { type ParseEntry, parse } from 'shell-quote';

/**
 * A shell command read as a shell would read it, so a rule can say "git push with a force flag"
 * instead of guessing with `contains`: `cd x && git -C y push -f` is two simple commands, the second
 * one `git` with subcommand `push` and flag `-f`. Tokenizing is shell-quote's (quotes, escapes,
 * operators, redirections); this file adds what it leaves to the caller: newlines and comments,
 * backticks, command substitution inside double quotes, `bash -c '…'` / `eval '…'`, wrappers such as
 * `sudo` and `env`, and leading `VAR=value` assignments. Pinned by shell.test.ts.
 *
 * It errs towards seeing more commands, never fewer: a here-document's body is read as commands too,
 * because a deny rule that misses a command is a hole and one that sees an extra one is only strict.
 */

/** One simple command of a pipeline, list or substitution. */
export interface ShellCommand {
  /** Its words without leading assignments and redirections: `["sudo", "git", "push", "-f"]`. */
  argv: string[];
  /** Leading `NAME=value` assignments. */
  env: string[];
  /** The program that runs, after wrappers (`sudo`, `env`, `command`, `exec`, `nohup`, `time`, `nice`), as a basename: `git`. */
  program: string;
  /** The first word after the program that is not an option or an option's value: `push`; `""` if none. */
  subcommand: string;
  /** Every option word after the program, as written (`-fu`, `--force-with-lease`), up to a `--`. */
  flags: string[];
}

export interface ParsedShell {
  /** The whole line split as a shell would, operators as their own tokens (`&&`, `|`, `;`). */
  argv: string[];
  commands: ShellCommand[];
}

/** Nested `bash -c` / `eval` / substitutions read this deep; deeper text is still one word. */
const MAX_DEPTH = 4;
/** Bounds the work one intent can cause; the first commands are the ones a rule is about. */
const MAX_COMMANDS = 256;
const MAX_TOKENS = 8_192;

const SEPARATORS = new Set(['&&', '||', ';', ';;', '|', '|&', '&', '(', ')', '<(', '>(']);
const REDIRECTS = new Set(['>', '>>', '<', '>&', '<&', '>|', '<>', '<<', '<<<', '&>', '&>>']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish']);

/**
 * Wrappers that run the rest of their words as the command, with the options of theirs that take a
 * value (so `sudo -u deploy git push` is `git`).
 */
const WRAPPERS: Record<string, ReadonlySet<string>> = {
  sudo: new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U']),
  doas: new Set(['-u', '-C']),
  env: new Set(['-u', '-C', '-S']),
  command: new Set(),
  exec: new Set(['-a']),
  nohup: new Set(),
  time: new Set(['-f', '-o']),
  nice: new Set(['-n']),
  stdbuf: new Set(['-i', '-o', '-e']),
};

/**
 * Global options that take the next word as their value, per program, so the subcommand after them
 * is found (`git -C repo push`). Unlisted programs: the first non-option word is the subcommand.
 */
const VALUE_OPTIONS: Record<string, ReadonlySet<string>> = {
  git: new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']),
  docker: new Set(['-H', '--host', '-c', '--context', '--config', '-l', '--log-level']),
  kubectl: new Set(['-n', '--namespace', '--context', '--cluster', '--kubeconfig', '-s', '--server']),
  npm: new Set(['-w', '--workspace', '--prefix']),
  cargo: new Set(['-C', '--config', '-Z']),
  gh: new Set(['-R', '--repo']),
  terraform: new Set(['-chdir']),
};

export function parseShell(command: string): ParsedShell {
  const out: ParsedShell = { argv: [], commands: [] };
  read(command, 0, out, true);
  return out;
}

/** shell-quote's reading alone, without the plain-text shortcut: what the shortcut must equal. */
export function parseShellSlow(command: string): ParsedShell {
  plainShortcut = false;
  try {
    return parseShell(command);
  } finally {
    plainShortcut = true;
  }
}
let plainShortcut = true;

/**
 * Text with nothing for a shell to interpret but spaces and the list operators `&&`, `||`, `|`, `;`,
 * `&`: no quote, escape, `$`, backtick, glob, redirection, comment or newline. Most agent commands
 * (`npm test`, `cd x && git push -f`) are like this, and they split by hand in a fraction of
 * shell-quote's time, to the same tokens (shell.test.ts compares the two over random such text).
 */
const PLAIN = /^[A-Za-z0-9_\-./:@%+=,~^ \t&|;]*$/;
/** shell-quote's control operators made of `&`, `|` and `;`, one shared token each: tokens are only read. */
const PLAIN_OPS: Record<string, ParseEntry> = Object.fromEntries(
  ['||', '&&', ';;&', ';;', ';&', '|&', '&', ';', '|'].map((op) => [op, Object.freeze({ op }) as ParseEntry]),
);

const isOpChar = (c: string | undefined) => c === '&' || c === '|' || c === ';';

/**
 * Words are runs of anything but space, tab and the three operator characters; a run of operator
 * characters splits as shell-quote splits it, longest operator first at each place (`||`, `&&`,
 * `;;&`, `;;`, `;&`, `|&`, then one character). A scan by hand: the regular expressions it replaces
 * were a tenth of a shell intent's allocation.
 */
function plainTokens(text: string): ParseEntry[] {
  const tokens: ParseEntry[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (isOpChar(c)) {
      const a = c!;
      const b = text[i + 1];
      let op: string;
      if ((a === '|' && b === '|') || (a === '&' && b === '&')) op = a + b;
      else if (a === ';' && b === ';') op = text[i + 2] === '&' ? ';;&' : ';;';
      else if ((a === ';' || a === '|') && b === '&') op = `${a}&`;
      else op = a;
      tokens.push(PLAIN_OPS[op]!);
      i += op.length;
      continue;
    }
    let j = i + 1;
    while (j < n) {
      const d = text[j];
      if (d === ' ' || d === '\t' || isOpChar(d)) break;
      j++;
    }
    tokens.push(text.slice(i, j));
    i = j;
  }
  return tokens;
}

function read(text: string, depth: number, out: ParsedShell, top: boolean): void {
  if (plainShortcut && PLAIN.test(text)) {
    readTokens(plainTokens(text), [], depth, out, top);
    return;
  }
  const { line, substitutions } = prepare(text);
  let tokens: ParseEntry[];
  try {
    // Variables stay as written (`$HOME`), never expanded from this process's environment.
    tokens = parse(line, (name) => `$${name}`) as ParseEntry[];
  } catch {
    tokens = line.split(/\s+/).filter(Boolean);
  }
  readTokens(tokens, substitutions, depth, out, top);
}

function readTokens(
  tokens: readonly ParseEntry[],
  substitutions: string[],
  depth: number,
  out: ParsedShell,
  top: boolean,
): void {
  let words: string[] = [];
  let skipNext = false;
  const flush = () => {
    if (words.length > 0) addCommand(words, depth, out);
    words = [];
  };
  for (let i = 0; i < tokens.length && out.argv.length < MAX_TOKENS; i++) {
    const token = tokens[i];
    if (typeof token === 'string') {
      if (top) out.argv.push(token);
      if (skipNext) {
        skipNext = false;
        continue;
      }
      // `$(` arrives as a `$` word before a `(` operator: the `$` is not a word of the command.
      const next = tokens[i + 1];
      if (token === '$' && typeof next === 'object' && next !== null && 'op' in next && next.op === '(')
        continue;
      words.push(token);
      for (const inner of substitutionsIn(token)) substitutions.push(inner);
      continue;
    }
    if (token === null || typeof token !== 'object') continue;
    if ('comment' in token) continue;
    if ('pattern' in token) {
      if (top) out.argv.push(token.pattern);
      if (!skipNext) words.push(token.pattern);
      skipNext = false;
      continue;
    }
    const op: string = token.op;
    if (top) out.argv.push(op);
    if (REDIRECTS.has(op)) {
      // `2>&1`: the fd number before the operator is not a word of the command.
      const last = words.at(-1);
      if (last !== undefined && /^\d+$/.test(last)) words.pop();
      skipNext = true;
      continue;
    }
    if (SEPARATORS.has(op)) flush();
  }
  flush();
  if (depth < MAX_DEPTH) for (const inner of substitutions) read(inner, depth + 1, out, false);
}

function addCommand(words: string[], depth: number, out: ParsedShell): void {
  if (out.commands.length >= MAX_COMMANDS) return;
  let start = 0;
  while (start < words.length && ASSIGNMENT.test(words[start]!)) start++;
  const argv = words.slice(start);
  if (argv.length === 0) return;
  const at = programIndex(argv);
  const program = basename(argv[at] ?? '');
  const rest = argv.slice(at + 1);
  out.commands.push({
    argv,
    env: words.slice(0, start),
    program,
    subcommand: subcommandOf(program, rest),
    flags: flagsOf(rest),
  });
  // `bash -c 'script'`, `eval 'script'`: the script's commands are commands of this line too.
  if (depth >= MAX_DEPTH) return;
  if (SHELLS.has(program)) {
    const c = rest.findIndex((w) => /^-[A-Za-z]*c[A-Za-z]*$/.test(w));
    const script = c >= 0 ? rest[c + 1] : undefined;
    if (script !== undefined) read(script, depth + 1, out, false);
  } else if (program === 'eval' && rest.length > 0) {
    read(rest.join(' '), depth + 1, out, false);
  }
}

/** The index of the word that names the program, after wrappers and their options. */
function programIndex(argv: readonly string[]): number {
  let i = 0;
  while (i < argv.length) {
    const valued = WRAPPERS[basename(argv[i]!)];
    if (!valued) return i;
    i++;
    while (i < argv.length) {
      const w = argv[i]!;
      if (w === '--') {
        i++;
        break;
      }
      if (ASSIGNMENT.test(w)) i++;
      else if (w.startsWith('-') && w.length > 1) i += valued.has(w) ? 2 : 1;
      else if (/^\d+$/.test(w) && basename(argv[i - 1] ?? '') === 'nice') i++;
      else break;
    }
  }
  return Math.min(i, argv.length - 1);
}

function subcommandOf(program: string, rest: readonly string[]): string {
  const valued = VALUE_OPTIONS[program];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (w === '--') return rest[i + 1] ?? '';
    if (w.startsWith('-') && w.length > 1) {
      if (valued?.has(w)) i++;
      continue;
    }
    return w;
  }
  return '';
}

function flagsOf(rest: readonly string[]): string[] {
  const flags: string[] = [];
  for (const w of rest) {
    if (w === '--') break;
    if (w.startsWith('-') && w.length > 1) flags.push(w);
  }
  return flags;
}

/**
 * Whether a command's words carry `flag`: exactly, as `--flag=value`, or (for a one-letter flag such
 * as `-f`) inside a cluster of short flags (`-fu`). The CEL helper `hasFlag` is this.
 */
export function hasFlag(words: readonly string[], flag: string): boolean {
  const short = /^-[A-Za-z0-9]$/.test(flag);
  for (const w of words) {
    if (w === '--') return false;
    if (w === flag || (flag.startsWith('--') && w.startsWith(`${flag}=`))) return true;
    if (short && /^-[A-Za-z0-9]{2,}$/.test(w) && w.includes(flag[1]!)) return true;
  }
  return false;
}

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash >= 0 ? word.slice(slash + 1) : word;
}

/**
 * One pass over the text outside single quotes: comments go, unquoted newlines become `;`, unquoted
 * backticks become `$(`…`)` (which shell-quote reads as operators), and backticks inside double quotes
 * are collected as substitutions to read as commands of their own.
 */
function prepare(text: string): { line: string; substitutions: string[] } {
  let line = '';
  const substitutions: string[] = [];
  let quote: '' | "'" | '"' = '';
  let tick = -1;
  let openTick = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = '';
      line += ch;
      continue;
    }
    if (ch === '\\' && i + 1 < text.length) {
      // A backslash-newline joins lines; any other escape is shell-quote's to read.
      if (text[i + 1] === '\n') line += ' ';
      else line += ch + text[i + 1];
      i++;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = '';
      else if (ch === '`') {
        if (tick < 0) tick = i + 1;
        else {
          substitutions.push(text.slice(tick, i));
          tick = -1;
        }
      }
      line += ch;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '`') {
      line += openTick ? ')' : '$(';
      openTick = !openTick;
      continue;
    } else if (ch === '\n') {
      line += ';';
      continue;
    } else if (ch === '#' && (i === 0 || /[\s;&|()]/.test(text[i - 1]!))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
      continue;
    }
    line += ch;
  }
  if (openTick) line += ')';
  return { line, substitutions };
}

/** `$(…)` bodies inside one word (a double-quoted argument keeps them whole: `"fix: $(date)"`). */
function substitutionsIn(word: string): string[] {
  const found: string[] = [];
  let i = word.indexOf('$(');
  while (i >= 0) {
    let level = 0;
    let end = -1;
    for (let j = i + 1; j < word.length; j++) {
      if (word[j] === '(') level++;
      else if (word[j] === ')' && --level === 0) {
        end = j;
        break;
      }
    }
    found.push(word.slice(i + 2, end < 0 ? word.length : end));
    if (end < 0) break;
    i = word.indexOf('$(', end + 1);
  }
  return found;
}
