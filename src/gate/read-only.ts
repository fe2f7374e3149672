/**
 * Tools that only read local files or list them, by the runtime's own name: the one list behind two
 * rules. The gate counts an intent for one of them as low risk, so it may fail open when the policy is
 * broken (seed 001: "只读诊断可以受控 fail-open"; `gate.read_only_tools` replaces the list per install).
 * The hook bridge lets one run when no decision can be had at all (docs/hooks.md). Anything unlisted is
 * high risk and fails closed, because an unknown tool may write. This file imports nothing: the bridge
 * bundle (scripts/bundle-hook.mjs) pulls it in and must stay small.
 *
 * Web tools are deliberately *not* here — WebFetch, WebSearch (Claude Code) and google_web_search
 * (Gemini CLI). They change nothing on the machine, but they send a URL or a query to a third party,
 * and either can carry what was just read off the machine (a key from `.env`, a customer's name). That
 * is egress, so it must never pass when the policy is broken or the gate is down, and a frozen agent
 * may not search. Pinned by read-only.test.ts (and the hook's agreement test).
 */
export const READ_ONLY_TOOLS: readonly string[] = [
  // Claude Code (also Cursor's beforeReadFile, which the adapter names `Read`)
  'Read',
  'Glob',
  'Grep',
  'LS',
  'NotebookRead',
  'TodoRead',
  // Gemini CLI
  'read_file',
  'read_many_files',
  'glob',
  'list_directory',
  'search_file_content',
  // Hermes
  'search_files',
  // OpenClaw
  'read',
];
