-- kairos-server's store on PostgreSQL: the same tables as the SQLite
-- store's migrations/0001_init.sql (see its comments), in PostgreSQL types.
-- Append-only: never edit a migration that has shipped.

CREATE TABLE accounts (
    id             TEXT PRIMARY KEY,
    created_ms     BIGINT NOT NULL,
    head           BIGINT NOT NULL DEFAULT 0,
    floor          BIGINT NOT NULL DEFAULT 0,
    compacted_head BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE devices (
    id           TEXT PRIMARY KEY,
    account      TEXT NOT NULL REFERENCES accounts(id),
    name         TEXT NOT NULL,
    token_sha256 BYTEA NOT NULL UNIQUE,
    created_ms   BIGINT NOT NULL,
    last_seen_ms BIGINT,
    revoked_ms   BIGINT
);
CREATE INDEX devices_by_account ON devices(account);

CREATE TABLE pairing_codes (
    code_sha256 BYTEA PRIMARY KEY,
    account     TEXT NOT NULL REFERENCES accounts(id),
    created_ms  BIGINT NOT NULL,
    expires_ms  BIGINT NOT NULL,
    used_ms     BIGINT,
    used_by     TEXT
);

CREATE TABLE ops (
    account  TEXT NOT NULL REFERENCES accounts(id),
    seq      BIGINT NOT NULL,
    op_id    TEXT NOT NULL,
    device   TEXT NOT NULL,
    entity   TEXT NOT NULL,
    hlc      TEXT NOT NULL,
    kind     TEXT NOT NULL,
    until_ms BIGINT,
    op_json  TEXT NOT NULL,
    PRIMARY KEY (account, seq)
);

CREATE TABLE op_ids (
    account TEXT NOT NULL,
    op_id   TEXT NOT NULL,
    seq     BIGINT NOT NULL,
    PRIMARY KEY (account, op_id)
);
