import { doubleUnderscoreMcp, type KindTable } from '../kinds.js';

/**
 * Codex's hook-facing tools (reference/wave2.md §5): `Bash` for every shell call (its `command` may
 * be argv), `apply_patch` with the raw patch body in `command`. `Edit`/`Write` matcher aliases are
 * unconfirmed; mapped as Claude Code's in case they arrive. `NetworkAccess` (PermissionRequest) has
 * no documented input shape and stays `other`.
 */
export const CODEX_KINDS: KindTable = {
  tools: {
    Bash: { kind: 'shell', args: { command: 'command', cwd: ['workdir', 'cwd'] } },
    apply_patch: { kind: 'file.edit', patch: ['command', 'patch', 'input'] },
    Edit: { kind: 'file.edit', args: { path: 'file_path' } },
    Write: { kind: 'file.write', args: { path: 'file_path' } },
  },
  mcp: doubleUnderscoreMcp,
};
