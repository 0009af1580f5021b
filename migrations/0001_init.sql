-- Kairos store, schema version 1.
--
-- APPEND-ONLY: once this file has shipped, never edit it. A change to the
-- schema is a new file, 0002_<what>.sql, added to the list in
-- crates/kairos-store/src/open.rs. The applied version is SQLite's
-- `user_version`; rusqlite_migration runs each file once, all pending files in
-- one transaction, so a failed upgrade leaves the database as it was.
--
-- Conventions:
-- * Every time is INTEGER unix milliseconds, UTC. The store never reads a
--   clock: each one was passed in by the caller.
-- * Tables are STRICT, so a value of the wrong type is refused, not coerced.
-- * `application_id` marks the file as Kairos's ('KAIR'), so a different
--   program's database is recognised and refused instead of being "migrated".
--
-- The tables:
-- * calendars  — one row per calendar (a name the user sees, a colour). Events
--                and instances belong to exactly one; deleting a calendar
--                deletes its events, instances and their deliveries.
-- * events     — what the user wrote, kept verbatim: one VEVENT (with its
--                VALARMs) as iCalendar text per (calendar, UID, RECURRENCE-ID),
--                '' being the master. `rule_version` is bumped by the caller
--                when the time, the recurrence or the alarms change, and is
--                copied into the instances computed from that version.
-- * instances  — one row per reminder instance: one trigger of one alarm of
--                one occurrence (plus snoozes). `key` is the caller's stable
--                instance key; UNIQUE makes re-computation idempotent. `state`
--                is the delivery state machine; every change of it is a guarded
--                UPDATE (… WHERE state IN (…)) so two engines cannot both fire
--                one instance. `payload` is JSON for the notification text
--                (summary, location, occurrence start…), opaque to SQL.
-- * deliveries — one row per attempt to deliver an instance on a channel, with
--                its outcome. A partial UNIQUE index lets each (instance,
--                channel) succeed at most once: the database itself refuses a
--                second successful delivery.
-- * audit      — append-only history: every state change and every delivery
--                attempt, with the reason, so "why did (or didn't) this fire?"
--                is a lookup by key. Not tied to instances by a foreign key: the
--                trail outlives an instance that was removed.
-- * meta       — small key/value pairs, e.g. the engine's single-writer lease
--                ('lease.owner', 'lease.until').

PRAGMA application_id = 1262569810;

CREATE TABLE calendars (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    color       TEXT,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE events (
    id            INTEGER PRIMARY KEY,
    calendar_id   INTEGER NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    uid           TEXT    NOT NULL,
    -- '' for the master; otherwise the RECURRENCE-ID of the override.
    recurrence_id TEXT    NOT NULL DEFAULT '',
    -- The VEVENT with its VALARMs, as iCalendar text.
    ics           TEXT    NOT NULL,
    -- Bumped by the caller when time, recurrence or alarms change.
    rule_version  INTEGER NOT NULL CHECK (rule_version >= 0),
    updated_at    INTEGER NOT NULL,
    UNIQUE (calendar_id, uid, recurrence_id)
) STRICT;

CREATE TABLE instances (
    id              INTEGER PRIMARY KEY,
    -- Stable instance key (calendar/uid/occurrence/alarm[/repetition]).
    key             TEXT    NOT NULL UNIQUE,
    calendar_id     INTEGER NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    event_uid       TEXT    NOT NULL,
    -- Original start of the occurrence (RECURRENCE-ID), as the caller wrote it.
    occurrence      TEXT    NOT NULL,
    -- Alarm UID, or the caller's stand-in for one.
    alarm           TEXT    NOT NULL,
    -- 0 for the trigger itself, k for its k-th REPEAT.
    repetition      INTEGER NOT NULL CHECK (repetition >= 0),
    rule_version    INTEGER NOT NULL CHECK (rule_version >= 0),
    trigger_at      INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN (
                        'pending', 'firing', 'delivered', 'failed', 'abandoned',
                        'acknowledged', 'snoozed', 'expired', 'missed')),
    -- How many times the instance entered 'firing'.
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- When a 'failed' instance should be tried again; NULL when not scheduled.
    next_attempt_at INTEGER,
    -- Key of the instance this one snoozes (NULL for a computed instance).
    snooze_of       TEXT,
    payload         TEXT    NOT NULL CHECK (json_valid(payload)),
    updated_at      INTEGER NOT NULL
) STRICT;

-- "Earliest pending" and "due now" walk this index in order: no sort, no scan.
CREATE INDEX instances_by_state_trigger ON instances (state, trigger_at, key);
-- Failed instances whose retry is due.
CREATE INDEX instances_by_state_retry ON instances (state, next_attempt_at, key);
-- Re-computation after an edit: the pending instances of one event.
CREATE INDEX instances_by_event ON instances (calendar_id, event_uid, state);

CREATE TABLE deliveries (
    id          INTEGER PRIMARY KEY,
    instance_id INTEGER NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
    channel     TEXT    NOT NULL,
    -- 'delivered', or how the attempt failed: 'retryable' (timeout, busy),
    -- 'permanent' (bad payload), 'unknown' (retried, fewer times).
    outcome     TEXT    NOT NULL CHECK (outcome IN (
                    'delivered', 'retryable', 'permanent', 'unknown')),
    error       TEXT,
    latency_ms  INTEGER,
    at          INTEGER NOT NULL
) STRICT;

-- At most one successful delivery per instance and channel, enforced by SQLite.
CREATE UNIQUE INDEX deliveries_once ON deliveries (instance_id, channel)
    WHERE outcome = 'delivered';
CREATE INDEX deliveries_by_instance ON deliveries (instance_id, at);

CREATE TABLE audit (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    key         TEXT    NOT NULL,
    -- NULL when the instance was created.
    from_state  TEXT,
    -- The new state, or 'removed' when a pending instance was superseded. For a
    -- delivery attempt from_state = to_state and `channel` is set.
    to_state    TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    channel     TEXT,
    latency_ms  INTEGER
) STRICT;

CREATE INDEX audit_by_key ON audit (key, id);
CREATE INDEX audit_by_at ON audit (at, id);

CREATE TABLE meta (
    k TEXT PRIMARY KEY,
    v TEXT NOT NULL
) STRICT, WITHOUT ROWID;
