import { z } from 'zod';

/** Five minutes (issue 6): long enough for a slow build step, short enough that an owner hears of a hang. */
export const DEFAULT_STALL_AFTER_SECONDS = 300;
/** The supervisor looks every 15 s: a stall is reported at most this late, and an idle tick is one query. */
export const DEFAULT_SUPERVISOR_INTERVAL_SECONDS = 15;
/** One hour: an agent run that takes longer is more likely stuck than working, and it can be resumed. */
export const DEFAULT_MAX_RUNTIME_SECONDS = 3600;
/** 200 hook-counted steps: generous for a real task, a hard stop for a loop of tool calls. */
export const DEFAULT_MAX_STEPS = 200;
/** Ten seconds between SIGTERM and SIGKILL: enough for an agent to flush its transcript, not enough to keep working. */
export const DEFAULT_KILL_GRACE_SECONDS = 10;

/**
 * A `command` action as the launcher runs it (docs/tasks.md): what a trigger's action and an A2A
 * skill's action both are.
 */
export const commandActionSchema = z.strictObject({
  type: z.literal('command'),
  command: z.array(z.string().min(1)).min(1),
  cwd: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  max_runtime_seconds: z.number().int().min(1).optional(),
  max_steps: z.number().int().min(1).optional(),
  runtime: z.string().min(1).optional(),
});

/**
 * Resume commands per runtime, as argv templates. The message reaches the process on stdin and in the
 * file named by SWITCHBOARD_INPUT_FILE, never as an argument: `{{message_file}}` may be used to pass
 * the file's path, which is ours and safe, but never its text.
 */
export const DEFAULT_RESUME: Record<string, string[]> = {
  'claude-code': ['claude', '-p', '--resume', '{{session_id}}'],
  codex: ['codex', 'exec', 'resume', '{{session_id}}'],
};

/**
 * Environment variables a launched agent inherits from the gateway. Everything else is dropped,
 * because the gateway's environment holds its own secrets (vault key, admin keys via `key_env`).
 */
export const DEFAULT_ENV_PASSTHROUGH = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'TERM',
  'TMPDIR',
  'SHELL',
];

const argvTemplate = z.array(z.string().min(1)).min(1);

export const tasksConfigSchema = z.strictObject({
  /** Per-task work dirs (input files) live here; default `<data_dir>/tasks`. */
  work_dir: z.string().min(1).optional(),
  stall_after_seconds: z.number().int().min(1).default(DEFAULT_STALL_AFTER_SECONDS),
  supervisor_interval_seconds: z.number().min(0.01).default(DEFAULT_SUPERVISOR_INTERVAL_SECONDS),
  max_runtime_seconds: z.number().int().min(1).default(DEFAULT_MAX_RUNTIME_SECONDS),
  max_steps: z.number().int().min(1).default(DEFAULT_MAX_STEPS),
  kill_grace_seconds: z.number().min(0).default(DEFAULT_KILL_GRACE_SECONDS),
  env_passthrough: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).default(DEFAULT_ENV_PASSTHROUGH),
  /** Overrides (and additions) to DEFAULT_RESUME, keyed by runtime name. */
  resume: z.record(z.string().min(1), argvTemplate).default({}),
});

export type TasksConfig = z.infer<typeof tasksConfigSchema>;
export type TasksConfigInput = z.input<typeof tasksConfigSchema>;

export function parseTasksConfig(raw: unknown): TasksConfig {
  return tasksConfigSchema.parse(raw ?? {});
}

export function resumeTemplate(cfg: TasksConfig, runtime: string): string[] | undefined {
  return cfg.resume[runtime] ?? DEFAULT_RESUME[runtime];
}
