-- The PostgreSQL twin of migrations/0004_remind_takeover.sql: a claim
-- takes the rows whose lease ran out (a stopped or killed instance's)
-- before any other, so they do not wait behind a backlog. Pending rows
-- with a lease (`lease_ms > 0`) are the ones claimed and not finished: a
-- few batches per instance, whatever the queue's size. Append-only.
CREATE INDEX remind_delivery_leased ON remind_delivery(lease_ms)
    WHERE state = 'pending' AND lease_ms > 0;
