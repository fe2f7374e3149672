-- Channels whose credential the provider refused (a 401, Slack invalid_auth / token_revoked, the
-- Feishu token endpoint refusing the app): one row while the channel is revoked (engine/revoked.ts).
-- `fingerprint` is a digest of the channel's config and the secrets it names at the time, so a changed
-- credential is noticed and the mark lifted; it is not the secret and cannot be turned back into it.
CREATE TABLE channel_credentials (
  destination TEXT PRIMARY KEY,
  status      TEXT NOT NULL CHECK (status IN ('revoked')),
  channel_type TEXT NOT NULL,
  reason      TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  since       BIGINT NOT NULL,
  event_id    TEXT NOT NULL
);
