/** What every backend (sql, http, command, in-process) is given for one run. */
export interface RunContext {
  /** Aborted at the deadline or when the gateway stops: the backend stops its work (kills, cancels). */
  signal: AbortSignal;
  /** The run's budget in milliseconds (the engine times out on its own too). */
  timeoutMs: number;
  /** The most bytes of backend output accepted; beyond it the backend throws RESULT_TOO_LARGE. */
  maxBytes: number;
  /** Partial output for the stream channel: a command's stdout lines, an HTTP body's lines. */
  onPartial?: (text: string) => void;
  caller: string;
  task_id: string | null;
  /** Whose memory and data scope this is: the task's owner for a task-bound key, else the key's name. */
  owner: string;
}

export interface Backend {
  run(params: Record<string, unknown>, ctx: RunContext): Promise<unknown>;
  /** Releases pools, threads and sockets at stop. */
  close?(): Promise<void>;
}

/** A backend's failure text, cut short for a model and a log: excerpts are evidence, not transcripts. */
export const EXCERPT_CHARS = 300;
