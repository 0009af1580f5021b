-- Server-side reminders (src/remind/), the PostgreSQL twin of migrations/0002_remind.sql: the server as one more replica of
-- each opted-in account's calendars, and a durable delay queue of its
-- reminder instances and fallback deliveries. Append-only.

-- Fallback settings (set by `kairos-server fallback`): for `calendar`
-- ('*': every calendar without its own row), send `channel` ('webhook' or
-- 'email') to `target` when no device acknowledged the reminder
-- `after_secs` after it fired, or always when `always` is 1.
CREATE TABLE remind_fallback (
    account    TEXT NOT NULL REFERENCES accounts(id),
    calendar   TEXT NOT NULL,
    channel    TEXT NOT NULL,
    target     TEXT NOT NULL,
    secret     TEXT,
    after_secs BIGINT NOT NULL,
    always     BIGINT NOT NULL,
    PRIMARY KEY (account, calendar, channel)
);

-- How far the replica has read the account's ops, and until when its
-- instances are planned (0: plan again at the next round).
CREATE TABLE remind_cursor (
    account          TEXT PRIMARY KEY REFERENCES accounts(id),
    seq              BIGINT NOT NULL,
    planned_until_ms BIGINT NOT NULL
);

-- The winning op of each calendar, series and working-time register.
CREATE TABLE remind_entity (
    account TEXT NOT NULL REFERENCES accounts(id),
    entity  TEXT NOT NULL,
    hlc     TEXT NOT NULL,
    op_json TEXT NOT NULL,
    PRIMARY KEY (account, entity)
);

-- Reminder keys some device dismissed or snoozed (an acknowledgement may
-- arrive before the server planned the instance).
CREATE TABLE remind_ack (
    account TEXT NOT NULL REFERENCES accounts(id),
    key     TEXT NOT NULL,
    at_ms   BIGINT NOT NULL,
    PRIMARY KEY (account, key)
);

-- One reminder instance, keyed as on every device (the engine's key).
-- state: pending | acked | withdrawn.
CREATE TABLE remind_instance (
    account  TEXT NOT NULL REFERENCES accounts(id),
    key      TEXT NOT NULL,
    calendar TEXT NOT NULL,
    due_ms   BIGINT NOT NULL,
    payload  TEXT NOT NULL,
    state    TEXT NOT NULL,
    PRIMARY KEY (account, key)
);
CREATE INDEX remind_instance_due ON remind_instance(account, due_ms);

-- One fallback delivery of one instance on one channel: the delay queue.
-- `target` and `secret` are the setting's when it was planned.
-- state: pending | delivered | abandoned | cancelled. A pending row with a
-- lease in the future is claimed by `owner`; past it, anyone may take it.
CREATE TABLE remind_delivery (
    account     TEXT NOT NULL REFERENCES accounts(id),
    key         TEXT NOT NULL,
    channel     TEXT NOT NULL,
    due_ms      BIGINT NOT NULL,
    next_ms     BIGINT NOT NULL,
    state       TEXT NOT NULL,
    always      BIGINT NOT NULL,
    target      TEXT NOT NULL,
    secret      TEXT,
    attempts    BIGINT NOT NULL DEFAULT 0,
    owner       TEXT,
    lease_ms    BIGINT NOT NULL DEFAULT 0,
    reason      TEXT,
    done_ms     BIGINT,
    PRIMARY KEY (account, key, channel)
);
CREATE INDEX remind_delivery_next ON remind_delivery(next_ms) WHERE state = 'pending';

-- At most one successful delivery per instance and channel, whatever the
-- instances and leases did: the primary key is the guarantee.
CREATE TABLE remind_sent (
    account TEXT NOT NULL,
    key     TEXT NOT NULL,
    channel TEXT NOT NULL,
    at_ms   BIGINT NOT NULL,
    owner   TEXT NOT NULL,
    PRIMARY KEY (account, key, channel)
);

-- The audit trail of `kairos-server why KEY`.
CREATE TABLE remind_audit (
    account TEXT NOT NULL,
    key     TEXT NOT NULL,
    at_ms   BIGINT NOT NULL,
    event   TEXT NOT NULL
);
CREATE INDEX remind_audit_key ON remind_audit(key, at_ms);
