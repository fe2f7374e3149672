/**
 * Sections `init` writes commented out: they name a database, a command or an agent the new gateway
 * does not have. config.test.ts parses each uncommented, so they cannot drift from the schema either.
 */
export const TOOLS_EXAMPLE = `tools:
  ticket.query:
    kind: sql
    description: Look up tickets by status
    input_schema: { type: object, required: [status], properties: { status: { enum: [open, pending, closed] } } }
    sql: { database_env: TICKETS_DB_URL, query: "SELECT id, title, status FROM tickets WHERE status = :status LIMIT 50" }
    context: { mode: head_tail, keep: 5 }
    redact: [cn_mobile, email]`;

export const A2A_EXAMPLE = `a2a:
  push: true
  skills:
    - id: review
      name: Review a change
      description: Reviews the diff in the message and reports findings
      action: { type: command, command: [claude, -p, "Review the change described in the attached file"] }`;

/** `block` as `init` writes it: each line behind `# `. */
export function commented(block: string): string {
  return block
    .split('\n')
    .map((l) => `# ${l}`)
    .join('\n');
}

/**
 * What `switchboard init` writes. config.test.ts parses it, so the example can never drift from the
 * schema. Every key is shown with its default; secrets are only ever named by environment variable.
 */
export const EXAMPLE_CONFIG = `# Switchboard configuration. Every key is optional; shown values are the defaults.
# Full reference: docs/config.md. Environment variables override the file (SWITCHBOARD_PORT=9000 …).

# Where the SQLite database, the vault key and other state live.   env: SWITCHBOARD_DATA_DIR
data_dir: ./.switchboard

server:
  host: 127.0.0.1            # env: SWITCHBOARD_HOST
  port: 8787                 # env: SWITCHBOARD_PORT
  # public_url: https://switchboard.example.com   # where a phone reaches approval links; env: SWITCHBOARD_PUBLIC_URL
  body_limit_bytes: 1048576  # larger request bodies get 413
  shutdown_timeout_ms: 10000 # graceful shutdown gives up after this
  metrics_public: false      # /metrics: loopback callers or an admin key unless true

store:
  # database_url: postgres://switchboard@127.0.0.1:5432/switchboard   # env: SWITCHBOARD_DATABASE_URL (unset: SQLite)
  sqlite_synchronous: full   # full: commits survive power loss; normal: faster, survive a process crash only

tenant:
  id: default
  environment: dev

auth:
  keys:                      # Bearer keys. A request without a valid key gets 401, a wrong role 403.
    # switchboard init generated these into owner-only files; see them with switchboard keys list|show.
    # Instead of key_file, key_env: SB_AGENT_KEY reads the key from an environment variable.
    - { name: laptop-agent, role: agent, key_file: ./.switchboard/keys/laptop-agent.key }
    - { name: me, role: approver, key_file: ./.switchboard/keys/me.key }
    - { name: ops, role: admin, key_file: ./.switchboard/keys/ops.key }

vault:
  key_env: SWITCHBOARD_VAULT_KEY   # 32 bytes, base64 or hex; unset: generated into data_dir/vault.key
  retention_days: 30               # raw payloads are deleted after this

log:
  level: info                # env: SWITCHBOARD_LOG_LEVEL

# Where notifications go. Recipients live here only, never in a tool call.
channels: {}
#  phone: { type: ntfy, url: "https://ntfy.sh", topic: "my-agents", token_env: NTFY_TOKEN }
#  hook:  { type: webhook, url: "https://example.com/hook", secret_env: HOOK_SECRET }

# Which channels get which notifications (CEL over the message).
routes: []
#  - { match: "true", channels: [phone] }

# Inbound webhooks: POST /v1/ingress/<name>
sources: {}
#  github: { type: github, secret_env: GITHUB_WEBHOOK_SECRET }

# The gate: CEL conditions over tool, input, action, resource, task, envelope.
rules: []
#  - { id: no-force-push, when: 'tool == "Bash" && input.command.contains("push --force")', decision: deny, reason_code: FORCE_PUSH }

# What an accepted webhook wakes.
triggers: []

# Outbound URLs: private, loopback and plain-HTTP targets are refused unless listed here.
egress:
  allow: []

# Tools agents reach through the gate: GET /v1/tools, POST /v1/touch, and the MCP server (docs/reach.md).
${commented(TOOLS_EXAMPLE)}

# Switchboard as an A2A agent: GET /.well-known/agent-card.json, POST /a2a (docs/a2a.md).
${commented(A2A_EXAMPLE)}
`;
