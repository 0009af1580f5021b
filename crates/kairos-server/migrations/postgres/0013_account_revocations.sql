-- How many revocations each account has had. The periodic head check
-- (`relay.rs`) reads it with the head: an instance that sees it move looks
-- for revoked devices among that account's sessions, so a revocation made
-- on another instance closes them even when its hint was lost (the
-- listener was reconnecting, or the revoking instance died between its
-- commit and its `NOTIFY`). A constant default: no table rewrite.
-- Append-only.
ALTER TABLE accounts ADD COLUMN revocations BIGINT NOT NULL DEFAULT 0;
