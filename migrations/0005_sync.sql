-- Kairos store: what sync needs on a device (issue #10). APPEND-ONLY.
--
-- * outbox    — every accepted local change (calendar/event create, edit,
--               delete; dismiss; snooze) of a paired database, as the op
--               that tells the other devices (kairos-proto's JSON), written
--               in the same transaction as the change itself. A row leaves
--               only when the server confirmed the op durable; replaying a
--               row the server has already is harmless (ops are keyed by id).
-- * registers — last-writer-wins state per synced entity (`calendar/UID`,
--               `series/CAL/UID`): the hybrid-logical-clock stamp of the
--               version this device holds, whether it is a tombstone, and
--               the stamp of the version it was made on top of (`base`,
--               NULL for a first version): two versions neither of which
--               is based on the other are concurrent, and the loser is
--               logged.
-- * acks      — per reminder (base instance key), the acknowledgement
--               record (RFC 9074), kept apart from the event: kairos-proto's
--               AckState as JSON. It only moves forward.
--
-- The device's identity, token, cursor and clock live in `meta` under
-- `sync.*` keys.

CREATE TABLE outbox (
    seq        INTEGER PRIMARY KEY,
    op_id      TEXT    NOT NULL UNIQUE,
    op         TEXT    NOT NULL CHECK (json_valid(op)),
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE registers (
    entity  TEXT    PRIMARY KEY,
    hlc     TEXT    NOT NULL,
    deleted INTEGER NOT NULL CHECK (deleted = 0 OR deleted = 1),
    base    TEXT
) STRICT, WITHOUT ROWID;

CREATE TABLE acks (
    key   TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (json_valid(state))
) STRICT, WITHOUT ROWID;
