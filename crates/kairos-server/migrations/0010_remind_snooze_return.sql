-- A snooze after the fallback went out sends it again for the return
-- (src/remind/ack_store.rs). The person saw the e-mail, snoozed the
-- reminder on a laptop until T and shut it: N minutes after T, with no
-- device acknowledging the return, the fallback goes out once more.
-- Before this, one delivery per instance and channel was all there could
-- be, and the return reached nobody.
--
-- A delivery is now (account, key, channel, round): `round` 0 is the
-- trigger's fallback (every row so far), a snooze's return has the
-- snooze's end (ms). `remind_sent`'s primary key, the guarantee of one
-- success, takes the round too: once per instance, channel and return.
-- At most one row of an instance and channel is pending at a time (a
-- return is queued only when none is). SQLite cannot change a primary
-- key, so both tables are rebuilt; their rows keep round 0. Append-only.
CREATE TABLE remind_delivery_new (
    account     TEXT NOT NULL REFERENCES accounts(id),
    key         TEXT NOT NULL,
    channel     TEXT NOT NULL,
    due_ms      INTEGER NOT NULL,
    next_ms     INTEGER NOT NULL,
    state       TEXT NOT NULL,
    always      INTEGER NOT NULL,
    target      TEXT NOT NULL,
    secret      TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0,
    owner       TEXT,
    lease_ms    INTEGER NOT NULL DEFAULT 0,
    reason      TEXT,
    done_ms     INTEGER,
    rank        INTEGER NOT NULL DEFAULT 10,
    calendar    TEXT NOT NULL DEFAULT '',
    round       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account, key, channel, round)
) STRICT;
INSERT INTO remind_delivery_new (account, key, channel, due_ms, next_ms, state, always, target,
                                 secret, attempts, owner, lease_ms, reason, done_ms, rank, calendar)
SELECT account, key, channel, due_ms, next_ms, state, always, target,
       secret, attempts, owner, lease_ms, reason, done_ms, rank, calendar
FROM remind_delivery;
DROP TABLE remind_delivery;
ALTER TABLE remind_delivery_new RENAME TO remind_delivery;
CREATE INDEX remind_delivery_leased ON remind_delivery(lease_ms)
    WHERE state = 'pending' AND lease_ms > 0;
CREATE INDEX remind_delivery_fresh ON remind_delivery((next_ms / 1000), rank, calendar, key)
    WHERE state = 'pending' AND lease_ms = 0;
CREATE INDEX remind_delivery_fresh_next ON remind_delivery(next_ms)
    WHERE state = 'pending' AND lease_ms = 0;

CREATE TABLE remind_sent_new (
    account TEXT NOT NULL,
    key     TEXT NOT NULL,
    channel TEXT NOT NULL,
    at_ms   INTEGER NOT NULL,
    owner   TEXT NOT NULL,
    round   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account, key, channel, round)
) STRICT;
INSERT INTO remind_sent_new (account, key, channel, at_ms, owner)
SELECT account, key, channel, at_ms, owner FROM remind_sent;
DROP TABLE remind_sent;
ALTER TABLE remind_sent_new RENAME TO remind_sent;
