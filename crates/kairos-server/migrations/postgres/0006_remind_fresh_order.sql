-- The PostgreSQL twin of migrations/0006_remind_fresh_order.sql: the
-- indexes of pending rows hold only rows never claimed
-- (src/remind/claim.rs). A claim sets `lease_ms`, an update that makes a
-- new row version: with `state = 'pending'` alone in their predicates,
-- `remind_delivery_order` and `remind_delivery_next` took every claimed
-- row in again (at the front of the order, beside the dead entry of the
-- version before), so a claim late in a burst walked two entries per row
-- already taken, and every claim wrote four index entries a row where it
-- now writes two (the primary key, `remind_delivery_leased`). Rows with a
-- lease are found through `remind_delivery_leased` (0004); a retry or
-- deferral sets `lease_ms` back to 0 and the row is in these again. The
-- queue depth counts both sets. Append-only.
DROP INDEX remind_delivery_order;
CREATE INDEX remind_delivery_fresh ON remind_delivery((next_ms / 1000), rank, calendar, key)
    WHERE state = 'pending' AND lease_ms = 0;
DROP INDEX remind_delivery_next;
CREATE INDEX remind_delivery_fresh_next ON remind_delivery(next_ms)
    WHERE state = 'pending' AND lease_ms = 0;
