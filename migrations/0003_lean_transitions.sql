-- Kairos store: cheaper state changes (issue #3, burst drain). APPEND-ONLY,
-- like every file here.
--
-- 1. CHECK constraints without `IN (…)` lists. SQLite evaluates a CHECK on
--    every row whose checked column changes, and codes a constant `IN` list
--    of more than two values as a temporary index that, inside a CHECK, is
--    rebuilt for every row: each `state` change paid for a 9-entry B-tree
--    (and each delivery a 4-entry one), more than the row update itself.
--    The same sets of values, spelled as `=` comparisons joined by OR, cost
--    a few string compares. Changing a CHECK means rebuilding the table
--    (SQLite's documented procedure: new table, copy, drop, rename; foreign
--    keys are off while migrations run and checked after this one, see
--    open.rs). Row ids are kept, so `deliveries.instance_id` stays valid.
--
-- 2. Fewer index entries per transition. A transition rewrites every index
--    entry that contains `state`; in version 1 all three secondary indexes
--    of `instances` did. Now only `instances_by_state_trigger` (due /
--    earliest / recovery / counters) does:
--    * the retry index holds failed instances only (partial), keyed by the
--      retry time, which is all `earliest_retry` / `retries_due` ask;
--    * the per-event index drops `state`: the edit path looks up one
--      event's instances (a handful) and filters `state` on the rows.
--
-- On a large database this copies every instance and delivery once.

CREATE TABLE instances_v3 (
    id              INTEGER PRIMARY KEY,
    key             TEXT    NOT NULL UNIQUE,
    calendar_id     INTEGER NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    event_uid       TEXT    NOT NULL,
    occurrence      TEXT    NOT NULL,
    alarm           TEXT    NOT NULL,
    repetition      INTEGER NOT NULL CHECK (repetition >= 0),
    rule_version    INTEGER NOT NULL CHECK (rule_version >= 0),
    trigger_at      INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (
                        state = 'pending' OR state = 'firing' OR state = 'delivered'
                        OR state = 'failed' OR state = 'abandoned' OR state = 'acknowledged'
                        OR state = 'snoozed' OR state = 'expired' OR state = 'missed'),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at INTEGER,
    snooze_of       TEXT,
    payload         TEXT    NOT NULL CHECK (json_valid(payload)),
    updated_at      INTEGER NOT NULL
) STRICT;

INSERT INTO instances_v3 (id, key, calendar_id, event_uid, occurrence, alarm, repetition,
                          rule_version, trigger_at, state, attempts, next_attempt_at,
                          snooze_of, payload, updated_at)
SELECT id, key, calendar_id, event_uid, occurrence, alarm, repetition,
       rule_version, trigger_at, state, attempts, next_attempt_at,
       snooze_of, payload, updated_at
FROM instances;

CREATE TABLE deliveries_v3 (
    id          INTEGER PRIMARY KEY,
    instance_id INTEGER NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
    channel     TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (
                    outcome = 'delivered' OR outcome = 'retryable'
                    OR outcome = 'permanent' OR outcome = 'unknown'),
    error       TEXT,
    latency_ms  INTEGER,
    at          INTEGER NOT NULL
) STRICT;

INSERT INTO deliveries_v3 (id, instance_id, channel, outcome, error, latency_ms, at)
SELECT id, instance_id, channel, outcome, error, latency_ms, at FROM deliveries;

-- Drops their indexes too. Nothing references `deliveries`; `deliveries_v3`
-- already names `instances`, which exists again after the rename below.
DROP TABLE deliveries;
DROP TABLE instances;
ALTER TABLE instances_v3 RENAME TO instances;
ALTER TABLE deliveries_v3 RENAME TO deliveries;

-- "Earliest pending", "due now", "left firing", counters: in index order.
CREATE INDEX instances_by_state_trigger ON instances (state, trigger_at, key);
-- Failed instances whose retry is due (only those are in it).
CREATE INDEX instances_retry ON instances (next_attempt_at, key) WHERE state = 'failed';
-- Re-computation after an edit: the instances of one event.
CREATE INDEX instances_of_event ON instances (calendar_id, event_uid);

-- At most one successful delivery per instance and channel, enforced by SQLite.
CREATE UNIQUE INDEX deliveries_once ON deliveries (instance_id, channel)
    WHERE outcome = 'delivered';
CREATE INDEX deliveries_by_instance ON deliveries (instance_id, at);
