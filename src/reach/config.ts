import { z } from 'zod';

/**
 * The `tools:` section (CONTRACT.md's wave-2 names: kind, description, input_schema, timeout,
 * permission, concurrency, channel, context, redact; the backend's own block beside them) and the
 * module's `reach:` section. Cross-field checks that need the schema compiled (a SQL parameter the
 * schema lacks, a URL field it does not declare) are in registry.ts, run as the manifest's
 * `checkConfig`, so every problem is one line at start-up.
 */

/** The seed's tiers (§6.1): query 8 s, write 15 s, long work (generation, big files) 60 s. */
export const TIMEOUT_TIERS = { query: 8_000, write: 15_000, long: 60_000 } as const;
export type TimeoutTier = keyof typeof TIMEOUT_TIERS;

/** The seed's default per-tool concurrency (§6.3): enough for a model's parallel calls, not for a loop. */
export const DEFAULT_CONCURRENCY = 5;
/** The seed's head/tail size (§4.2): the first and last five rows are what a model reads anyway. */
export const DEFAULT_KEEP = 5;
/** Seed §3.2: a tool that takes longer than this is not waited for on `sync`. */
export const SYNC_ESTIMATE_LIMIT_MS = 3_000;

export const PII_KINDS = ['cn_mobile', 'cn_id_card', 'bank_card', 'email'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export const PERMISSIONS = ['read', 'write', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export const CHANNELS = ['sync', 'async', 'stream'] as const;
export type Channel = (typeof CHANNELS)[number];

/** MCP's tool-name rule (1–128 of `[A-Za-z0-9_.-]`), so every registry tool can be listed over MCP. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name like TICKETS_DB_URL');

const contextSchema = z
  .strictObject({
    mode: z.enum(['raw', 'summary', 'head_tail']).default('raw'),
    keep: z.number().int().min(1).max(100).default(DEFAULT_KEEP),
    /** Strings longer than this are cut in `summary` and `head_tail` output (with a marker). */
    max_string: z.number().int().min(16).max(100_000).default(500),
  })
  .prefault({});

const sqlSchema = z
  .strictObject({
    /** The variable holding the database: `postgres://…`, or a SQLite path (`sqlite:/…`, `file:/…`, `/…`). */
    database_env: envName.optional(),
    /** A SQLite file path written in the config (never a PostgreSQL URL: those carry passwords). */
    database: z.string().min(1).optional(),
    /** Named parameters only (`:status`); every one must be a property of `input_schema`. */
    query: z.string().min(1),
  })
  .refine((s) => (s.database_env === undefined) !== (s.database === undefined), {
    message: 'set exactly one of database_env (recommended) or database',
  });

const httpSchema = z.strictObject({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  /** `{field}` is replaced by the percent-encoded parameter; every field must be in `input_schema`. */
  url: z.string().min(1),
  /** A header by value, or `<name>_env: VARIABLE` for a secret (`authorization_env: WEATHER_TOKEN`). */
  headers: z.record(z.string(), z.string()).default({}),
});

const commandSchema = z.union([
  z.array(z.string().min(1)).min(1),
  z.strictObject({
    argv: z.array(z.string().min(1)).min(1),
    cwd: z.string().optional(),
    /** Variables the command gets besides PATH and LANG: a value, or `<NAME>_env: VARIABLE` to pass one on. */
    env: z.record(z.string(), z.string()).default({}),
  }),
]);

export const toolSchema = z
  .strictObject({
    kind: z.enum(['http', 'sql', 'command']),
    description: z.string().max(2000).default(''),
    /** JSON Schema (draft 2020-12 keywords Ajv knows); `additionalProperties: false` unless it says otherwise. */
    input_schema: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
    timeout: z.enum(['query', 'write', 'long']).optional(),
    timeout_ms: z.number().int().min(1).max(3_600_000).optional(),
    /** What the tool does to the world: `read` tools are read-only (SQL in a read-only transaction). */
    permission: z.enum(PERMISSIONS).default('read'),
    concurrency: z.number().int().min(1).max(1000).default(DEFAULT_CONCURRENCY),
    /** The channel a touch uses when the request names none. */
    channel: z.enum(CHANNELS).default('sync'),
    /** The declared typical duration; above 3 s the tool is refused on `sync` (seed §3.2). */
    estimate_ms: z.number().int().min(0).optional(),
    context: contextSchema,
    redact: z.array(z.enum(PII_KINDS)).default([]),
    /**
     * Its results are outside content (a ticket a customer wrote, a page someone else controls): a
     * session that touches it is `session.untrusted` for history-aware rules (docs/policy.md).
     */
    untrusted: z.boolean().default(false),
    sql: sqlSchema.optional(),
    http: httpSchema.optional(),
    command: commandSchema.optional(),
  })
  .refine((t) => !(t.timeout !== undefined && t.timeout_ms !== undefined), {
    message: 'set timeout (a tier) or timeout_ms, not both',
  })
  .superRefine((t, ctx) => {
    for (const kind of ['sql', 'http', 'command'] as const) {
      const has = t[kind] !== undefined;
      if (kind === t.kind && !has)
        ctx.addIssue({ code: 'custom', path: [kind], message: `a ${kind} tool needs a ${kind} block` });
      if (kind !== t.kind && has)
        ctx.addIssue({ code: 'custom', path: [kind], message: `a ${t.kind} tool takes no ${kind} block` });
    }
  });

export type ToolConfig = z.output<typeof toolSchema>;

export const toolsSchema = z
  .record(z.string().regex(TOOL_NAME, 'a tool name is 1–128 of A-Z a-z 0-9 _ . -'), toolSchema)
  .default({});

/** 1 MiB: four hundred ticket rows are ~60 KiB; a result past this is a query that forgot its LIMIT. */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

export const reachSchema = z
  .strictObject({
    /** Touches one task may make (seed §6.3: a model retrying in a loop stops here). 0: no cap. */
    touch_cap_per_task: z.number().int().min(0).default(200),
    /** The largest backend answer (HTTP body, command stdout, serialized rows); beyond: RESULT_TOO_LARGE. */
    max_result_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(DEFAULT_MAX_RESULT_BYTES),
    /** How long an async or stream touch's result can be fetched with GET /v1/touch/{id}. */
    result_ttl_seconds: z.number().int().min(60).default(86_400),
    /** Files whose exports are in-process tools (`{ name, schema, run }`), loaded at start. */
    modules: z.array(z.string().min(1)).default([]),
    memory: z
      .strictObject({
        /** `memory_write`, `memory_read`, `memory_search` in the registry and over MCP. */
        enabled: z.boolean().default(true),
        /** Seed §4.2: the last 3–5 touches stay in the short-term view; older ones are archived. */
        short_term: z.number().int().min(1).max(50).default(5),
        /** The largest value one `memory_write` stores. */
        max_value_bytes: z
          .number()
          .int()
          .min(256)
          .max(1024 * 1024)
          .default(64 * 1024),
      })
      .prefault({}),
  })
  .prefault({});

export type ReachConfig = z.output<typeof reachSchema>;

export const reachSections = { tools: toolsSchema, reach: reachSchema };

/** The tool's deadline: `timeout_ms`, else its tier, else the tier its permission implies. */
export function timeoutOf(t: Pick<ToolConfig, 'timeout' | 'timeout_ms' | 'permission'>): number {
  if (t.timeout_ms !== undefined) return t.timeout_ms;
  if (t.timeout) return TIMEOUT_TIERS[t.timeout];
  return t.permission === 'read' ? TIMEOUT_TIERS.query : TIMEOUT_TIERS.write;
}
