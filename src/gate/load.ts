import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Document, isNode, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { type Policy, policyConfigSchema, policyFileSchema, type Rule } from './config.js';

/**
 * Where rules come from. `config` is the main YAML config: only `rules`, `policy_files` and `gate`
 * are read here (the config module owns and checks the other keys). `file`/`text` are policy files
 * (`rules:` only). `value` is an already parsed config section and has no line numbers.
 */
export type PolicySource =
  | { kind: 'config'; name: string; text: string; base_dir?: string }
  | { kind: 'file'; path: string }
  | { kind: 'text'; name: string; text: string }
  | { kind: 'value'; name: string; value: unknown; base_dir?: string };

/** One thing wrong with the policy, located so an editor can jump to it. Lines are 1-based. */
export interface PolicyProblem {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
}

/** Where rule `i` of the policy was written; `when_line` locates CEL errors. */
export interface RuleOrigin {
  file: string;
  line: number;
  column: number;
  when_line?: number;
  input_expr_line?: number;
}

export type LoadResult =
  | { ok: true; policy: Policy; origins: RuleOrigin[]; files: string[] }
  | { ok: false; problems: PolicyProblem[] };

interface Located {
  file: string;
  at(path: readonly PropertyKey[]): { line: number; column: number };
}

const NOWHERE = { line: 0, column: 0 };

export function formatProblem(p: PolicyProblem): string {
  const where = p.line > 0 ? `${p.file}:${p.line}:${p.column}` : p.file;
  return p.path ? `${where} ${p.path}: ${p.message}` : `${where} ${p.message}`;
}

/** Reads every source, reports every problem (never just the first), and keeps rules in source order. */
export function loadPolicy(sources: readonly PolicySource[]): LoadResult {
  const problems: PolicyProblem[] = [];
  const rules: Rule[] = [];
  const origins: RuleOrigin[] = [];
  const files: string[] = [];
  let gate: Policy['gate'] | undefined;
  let gateFrom: string | undefined;

  const addRules = (found: Rule[], loc: Located) => {
    found.forEach((rule, i) => {
      rules.push(rule);
      const at = loc.at(['rules', i]);
      origins.push({
        file: loc.file,
        ...at,
        when_line: loc.at(['rules', i, 'when']).line,
        input_expr_line: loc.at(['rules', i, 'input_expr']).line,
      });
    });
  };

  const readPolicyFile = (name: string, text: string) => {
    const parsed = parseYaml(name, text, problems);
    if (!parsed) return;
    const checked = policyFileSchema.safeParse(parsed.value ?? {});
    if (!checked.success) return void problems.push(...zodProblems(checked.error, parsed.loc));
    addRules(checked.data.rules, parsed.loc);
  };

  const readConfig = (name: string, value: unknown, loc: Located, baseDir: string) => {
    const section = pick(value, ['rules', 'policy_files', 'gate']);
    const checked = policyConfigSchema.safeParse(section);
    if (!checked.success) return void problems.push(...zodProblems(checked.error, loc));
    if (isRecord(section) && section['gate'] !== undefined) {
      if (gateFrom === undefined) {
        gateFrom = name;
        gate = checked.data.gate;
      } else {
        const message = `gate options are already set in ${gateFrom}`;
        problems.push({ file: name, ...loc.at(['gate']), path: 'gate', message });
      }
    }
    addRules(checked.data.rules, loc);
    checked.data.policy_files.forEach((pattern, i) => {
      const matched = expandPattern(pattern, baseDir);
      if (matched.kind === 'missing') {
        problems.push({
          file: name,
          ...loc.at(['policy_files', i]),
          path: `policy_files.${i}`,
          message: matched.message,
        });
        return;
      }
      for (const path of matched.paths) {
        files.push(path);
        readPolicyFile(path, readFileSync(path, 'utf8'));
      }
    });
  };

  for (const source of sources) {
    switch (source.kind) {
      case 'config': {
        const parsed = parseYaml(source.name, source.text, problems);
        if (parsed)
          readConfig(source.name, parsed.value ?? {}, parsed.loc, source.base_dir ?? dirname(source.name));
        break;
      }
      case 'value': {
        const loc: Located = { file: source.name, at: () => NOWHERE };
        readConfig(source.name, source.value, loc, source.base_dir ?? process.cwd());
        break;
      }
      case 'file': {
        if (!existsSync(source.path)) {
          problems.push({ file: source.path, ...NOWHERE, path: '', message: 'policy file not found' });
          break;
        }
        files.push(source.path);
        readPolicyFile(source.path, readFileSync(source.path, 'utf8'));
        break;
      }
      case 'text':
        readPolicyFile(source.name, source.text);
        break;
    }
  }

  problems.push(...duplicateIds(rules, origins));
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, policy: { rules, gate: gate ?? policyConfigSchema.parse({}).gate }, origins, files };
}

function parseYaml(
  file: string,
  text: string,
  problems: PolicyProblem[],
): { value: unknown; loc: Located } | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const err of doc.errors) {
      const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
      problems.push({ file, line: pos.line, column: pos.col, path: '', message: firstLine(err.message) });
    }
    return undefined;
  }
  return { value: doc.toJS(), loc: { file, at: (path) => position(doc, lineCounter, path) } };
}

/** The position of the deepest node that exists along `path` (a missing key points at its parent). */
function position(
  doc: Document,
  lc: LineCounter,
  path: readonly PropertyKey[],
): { line: number; column: number } {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as unknown[], true);
    if (isNode(node) && node.range) {
      const { line, col } = lc.linePos(node.range[0]);
      return { line, column: col };
    }
  }
  return { line: 1, column: 1 };
}

function zodProblems(error: z.ZodError, loc: Located): PolicyProblem[] {
  return error.issues.map((issue) => {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    return { file: loc.file, ...loc.at(path), path: path.join('.'), message: issue.message };
  });
}

function duplicateIds(rules: readonly Rule[], origins: readonly RuleOrigin[]): PolicyProblem[] {
  const seen = new Map<string, RuleOrigin>();
  const out: PolicyProblem[] = [];
  rules.forEach((rule, i) => {
    const here = origins[i]!;
    const first = seen.get(rule.id);
    if (first) {
      out.push({
        file: here.file,
        line: here.line,
        column: here.column,
        path: 'id',
        message: `duplicate rule id "${rule.id}" (first at ${first.file}:${first.line})`,
      });
    } else seen.set(rule.id, here);
  });
  return out;
}

type Expanded = { kind: 'ok'; paths: string[] } | { kind: 'missing'; message: string };

/**
 * `*` and `?` in the last path segment only (`./policy/*.yaml`); matches sort by name so the rule
 * order, and with it the tie-break, does not depend on the file system's listing order.
 */
export function expandPattern(pattern: string, baseDir: string): Expanded {
  const full = resolve(baseDir, pattern);
  const dir = dirname(full);
  const leaf = full.slice(dir.length + 1);
  if (/[*?]/.test(dir)) return { kind: 'missing', message: 'wildcards are allowed in the file name only' };
  if (!/[*?]/.test(leaf)) {
    return existsSync(full)
      ? { kind: 'ok', paths: [full] }
      : { kind: 'missing', message: `no such file ${full}` };
  }
  if (!existsSync(dir)) return { kind: 'missing', message: `no such directory ${dir}` };
  const re = new RegExp(
    `^${leaf
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  const paths = readdirSync(dir)
    .filter((name) => re.test(name))
    .sort()
    .map((name) => join(dir, name));
  return { kind: 'ok', paths };
}

function pick(value: unknown, keys: readonly string[]): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
