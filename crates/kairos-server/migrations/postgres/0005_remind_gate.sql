-- The PostgreSQL twin of migrations/0005_remind_gate.sql: the gate's state
-- shared by every instance (src/remind/gate.rs decides,
-- src/remind/shared.rs keeps): a token bucket per account, the tokens
-- reserved for deliveries the bucket deferred, and a circuit breaker per
-- destination. Append-only.

-- The rate limit of `account`: `tokens` at `at_ms` (below 0: tokens owed
-- to deferred deliveries), refilled at the limit's rate from `at_ms`.
CREATE TABLE remind_bucket (
    account TEXT PRIMARY KEY,
    tokens  DOUBLE PRECISION NOT NULL,
    at_ms   BIGINT NOT NULL
);

-- A delivery (`KEY/CHANNEL`) the rate limit deferred to `at_ms` holds the
-- token it reserved then: it goes without taking another.
CREATE TABLE remind_reserved (
    account  TEXT NOT NULL,
    delivery TEXT NOT NULL,
    at_ms    BIGINT NOT NULL,
    PRIMARY KEY (account, delivery)
);

-- The breaker of a destination (a webhook's host:port, or `smtp`); no row:
-- closed with no failure. Open while `open_until_ms` is ahead, half-open
-- once it is past: then one instance (`probe_owner`) sends a probe, and
-- its hold ends at `probe_until_ms` even if that instance died.
CREATE TABLE remind_breaker (
    destination    TEXT PRIMARY KEY,
    failures       BIGINT NOT NULL,
    open_until_ms  BIGINT NOT NULL,
    probe_owner    TEXT,
    probe_until_ms BIGINT NOT NULL
);
