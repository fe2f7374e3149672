import { z } from 'zod';

/**
 * The runtime-independent signal kinds a hook can raise. Each runtime maps its own events onto them
 * (`mapping.ts`); the config turns each on or off, globally and per runtime.
 */
export const SIGNAL_KINDS = [
  'permission_prompt',
  'elicitation',
  'idle_prompt',
  'turn_done',
  'subagent_done',
  'turn_failed',
  'session_ended',
  'permission_request',
  'other_notification',
] as const;
export type SignalKind = (typeof SIGNAL_KINDS)[number];

/**
 * Defaults follow seed 000's table: waiting for a person and failures always go out, a finished turn
 * sends one message, nothing per tool call. A subagent finishing is a step of a turn, not its end, and a
 * session ending says nothing a finished turn did not. `permission_request` is off because the gate
 * already decides it and the approvals module announces any approval it creates (Hermes turns it on:
 * its `pre_approval_request` is observe-only, so nobody else would tell the phone).
 */
export const DEFAULT_KINDS: Record<SignalKind, boolean> = {
  permission_prompt: true,
  elicitation: true,
  idle_prompt: true,
  turn_done: true,
  subagent_done: false,
  turn_failed: true,
  session_ended: false,
  permission_request: false,
  other_notification: false,
};

export const RUNTIME_DEFAULTS: Record<string, Partial<Record<SignalKind, boolean>>> = {
  hermes: { permission_request: true },
};

const kindSwitches = z.strictObject(
  Object.fromEntries(SIGNAL_KINDS.map((k) => [k, z.boolean().optional()])) as Record<
    SignalKind,
    z.ZodOptional<z.ZodBoolean>
  >,
);

/** See `stall_after_seconds`. */
export const DEFAULT_STALL_AFTER_SECONDS = 600;

export const signalsConfigSchema = z.strictObject({
  /** Off: signals are recorded by the runtimes route as always, and nothing more happens. */
  enabled: z.boolean().default(true),
  /** Overrides of `DEFAULT_KINDS` for every runtime. */
  events: kindSwitches.default({}),
  /** Overrides per runtime (`claude-code`, `codex`, `gemini-cli`, `hermes`, `openclaw`, `cursor`). */
  runtimes: z
    .partialRecord(
      z.enum(['claude-code', 'codex', 'gemini-cli', 'hermes', 'openclaw', 'cursor']),
      kindSwitches,
    )
    .default({}),
  /**
   * An interactive session mid-turn (a prompt or a tool call seen, no `Stop` yet, not waiting for a
   * person) with no hook activity for this long gets one stall notice on the priority lane; the next
   * activity clears it. 0 turns the watch off. Ten minutes: a long build or test run inside one tool
   * call is normal, and a notice for it would teach people to ignore the next one.
   */
  stall_after_seconds: z.number().int().min(0).max(86_400).default(DEFAULT_STALL_AFTER_SECONDS),
  /** Characters of the last assistant message kept in a `done` summary's detail. */
  summary_max_chars: z.number().int().min(0).max(2000).default(280),
  away: z
    .strictObject({
      /**
       * Away is also on, without the switch, when no person has typed a prompt for this long. Unset:
       * only the switch counts.
       */
      auto_after_idle_seconds: z.number().int().positive().optional(),
    })
    .default({}),
  /**
   * Permission prompts no rule decided (Claude Code and Codex `PermissionRequest`): while the owner
   * is away, each becomes an approval with approve/deny buttons on the phone, and the hook is held for
   * the answer. No answer within `wait_seconds` is no decision: the runtime's own dialog appears at the
   * desk, and the approval expires (and says so).
   */
  permissions: z
    .strictObject({
      to_phone: z.boolean().default(true),
      /** Also capped at the runtime's longest hold (`runtimeHoldMs`) and by the bridge's deadline. */
      wait_seconds: z.number().int().min(1).max(3600).default(300),
    })
    .prefault({}),
});

export type SignalsConfig = z.infer<typeof signalsConfigSchema>;

/** Whether a kind is on for a runtime: the runtime's override, else the global one, else the default. */
export function kindEnabled(cfg: SignalsConfig, runtime: string, kind: SignalKind): boolean {
  const perRuntime = (cfg.runtimes as Record<string, Partial<Record<SignalKind, boolean>>>)[runtime];
  return perRuntime?.[kind] ?? cfg.events[kind] ?? RUNTIME_DEFAULTS[runtime]?.[kind] ?? DEFAULT_KINDS[kind];
}
