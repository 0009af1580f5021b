-- kairos-server's own store (not the device schema in /migrations).
-- Append-only: never edit a migration that has shipped.

-- A person. `head` is the highest seq handed out; `floor` the highest seq
-- compaction removed (a cursor below it needs a snapshot); `compacted_head`
-- the head at the last compaction.
CREATE TABLE accounts (
    id             TEXT PRIMARY KEY,
    created_ms     INTEGER NOT NULL,
    head           INTEGER NOT NULL DEFAULT 0,
    floor          INTEGER NOT NULL DEFAULT 0,
    compacted_head INTEGER NOT NULL DEFAULT 0
) STRICT;

-- A database that joined an account. Only the token's SHA-256 is kept.
CREATE TABLE devices (
    id           TEXT PRIMARY KEY,
    account      TEXT NOT NULL REFERENCES accounts(id),
    name         TEXT NOT NULL,
    token_sha256 BLOB NOT NULL UNIQUE,
    created_ms   INTEGER NOT NULL,
    last_seen_ms INTEGER,
    revoked_ms   INTEGER
) STRICT;
CREATE INDEX devices_by_account ON devices(account);

-- One-time pairing codes, hashed (SHA-256 of the canonical 12 characters).
CREATE TABLE pairing_codes (
    code_sha256 BLOB PRIMARY KEY,
    account     TEXT NOT NULL REFERENCES accounts(id),
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER NOT NULL,
    used_ms     INTEGER,
    used_by     TEXT
) STRICT;

-- Ops per account in seq order. `kind`, `entity`, `hlc` and `until_ms` are
-- what compaction needs without parsing `op_json` (the op as encoded by
-- kairos-proto, sent as it is).
CREATE TABLE ops (
    account  TEXT NOT NULL REFERENCES accounts(id),
    seq      INTEGER NOT NULL,
    op_id    TEXT NOT NULL,
    device   TEXT NOT NULL,
    entity   TEXT NOT NULL,
    hlc      TEXT NOT NULL,
    kind     TEXT NOT NULL,
    until_ms INTEGER,
    op_json  TEXT NOT NULL,
    PRIMARY KEY (account, seq)
) STRICT;

-- Every op id ever stored and its first seq. Compaction never touches it, so
-- a device re-pushing an op that was compacted away still gets its first seq
-- and the op is not stored or fanned out again.
CREATE TABLE op_ids (
    account TEXT NOT NULL,
    op_id   TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    PRIMARY KEY (account, op_id)
) STRICT, WITHOUT ROWID;
