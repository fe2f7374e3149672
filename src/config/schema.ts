import { z } from 'zod';

/**
 * The one config schema. Defaults live here and nowhere else; docs/config.md lists every key with its
 * environment variable (config.test.ts keeps the two in sync). Objects are strict: an unknown key is an
 * error, because a misspelt `requre_approval` silently ignored is a policy hole.
 */

export const DEFAULT_PORT = 8787;
/** 1 MiB: larger than any hook or webhook payload seen in practice (GitHub caps deliveries at 25 MB, but
 * push payloads over 1 MiB are rare), and small enough that a flood of big bodies cannot exhaust memory. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name like MY_SECRET');

export const apiKeySchema = z
  .strictObject({
    name: z.string().min(1),
    role: z.enum(['admin', 'agent', 'approver']),
    key_env: envName.optional(),
    key: z.string().min(16, 'a literal key must be at least 16 characters; prefer key_env').optional(),
    /** A file holding the key (owner-only; `switchboard init` and `keys rotate` write it). Relative to the working directory, like data_dir. */
    key_file: z.string().min(1).optional(),
    /** Binds an agent key to one task (launched agents get such keys). */
    task_id: z.string().optional(),
  })
  .refine((k) => [k.key_env, k.key, k.key_file].filter((v) => v !== undefined).length === 1, {
    message: 'set exactly one of key_file (what switchboard init writes), key_env or key',
  });

const serverSchema = z.strictObject({
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(DEFAULT_PORT),
  /** Where a phone reaches this gateway: approval links and buttons point here. */
  public_url: z.url().optional(),
  /**
   * Host names besides localhost, IP addresses, `host` and public_url's that requests may name in
   * `Host` (and browser pages in `Origin`): the DNS-rebinding defence (src/kernel/origin.ts).
   * `*.example.com` admits subdomains; `*` admits any name and turns the defence off.
   */
  allowed_hosts: z
    .array(
      z
        .string()
        .regex(
          /^(\*|(\*\.)?\w([\w-]*\w)?(\.\w([\w-]*\w)?)*\.?)$/,
          'a host name (no scheme, port or path), `*.example.com`, or `*`',
        ),
    )
    .default([]),
  body_limit_bytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(DEFAULT_BODY_LIMIT_BYTES),
  /** How long a graceful shutdown waits for in-flight requests and workers before exiting anyway. */
  shutdown_timeout_ms: z.number().int().min(0).default(10_000),
  /** Serve /metrics to anyone (default: loopback callers, or an admin key). */
  metrics_public: z.boolean().default(false),
  /**
   * Reverse proxies (CIDRs) whose `X-Forwarded-For` names the real sender, for the sources'
   * `allow_ips`; empty: the header is never read, the socket peer is the sender (docs/ingress-sources.md).
   */
  trusted_proxies: z.array(z.string().min(1)).default([]),
});

const storeSchema = z.strictObject({
  database_url: z.string().optional(),
  /** `full`: every commit survives power loss. `normal`: survives a process crash, faster. */
  sqlite_synchronous: z.enum(['full', 'normal']).default('full'),
});

const vaultSchema = z.strictObject({
  key_env: envName.default('SWITCHBOARD_VAULT_KEY'),
  /** Raw payloads are evidence, not an archive: keep them long enough to investigate, then drop them. */
  retention_days: z.number().int().min(1).default(30),
});

/**
 * The core's keys. Every other top-level key belongs to the module that owns it and is declared in its
 * manifest (`config: { approvals: approvalsConfigSchema }`); the kernel assembles the one strict schema
 * (src/kernel/config.ts), so an unknown key anywhere is an error.
 */
export const coreConfigShape = {
  data_dir: z.string().default('./.switchboard'),
  server: serverSchema.default(serverSchema.parse({})),
  store: storeSchema.default(storeSchema.parse({})),
  tenant: z
    .strictObject({ id: z.string().min(1).default('default'), environment: z.string().min(1).default('dev') })
    .default({ id: 'default', environment: 'dev' }),
  auth: z.strictObject({ keys: z.array(apiKeySchema).default([]) }).default({ keys: [] }),
  vault: vaultSchema.default(vaultSchema.parse({})),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .default({ level: 'info' }),
  /** Outbound destinations allowed past the SSRF guard (src/egress); checked by the app root. */
  egress: z.strictObject({ allow: z.array(z.string()).default([]) }).default({ allow: [] }),
};

export const coreConfigSchema = z.strictObject(coreConfigShape);

export type CoreConfig = z.output<typeof coreConfigSchema>;
export type ApiKeyConfig = z.infer<typeof apiKeySchema>;
