-- Console sessions (src/console, docs/console.md). `id` is the SHA-256 of the cookie's value, so the
-- table holds nothing a browser could present; `key_mac` is an HMAC (under a key derived from the vault
-- key) of the signing-in key's digest, re-checked on every request so a rotated key ends its sessions.
CREATE TABLE console_sessions (
  id         TEXT PRIMARY KEY,
  principal  TEXT NOT NULL,
  role       TEXT NOT NULL,
  key_mac    TEXT NOT NULL,
  csrf       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
