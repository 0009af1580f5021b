-- Server-side reminders: the indexes of pending rows hold only rows never
-- claimed (src/remind/claim.rs). A claim sets `lease_ms`; with
-- `state = 'pending'` alone in their predicates, `remind_delivery_order`
-- and `remind_delivery_next` kept every claimed row, at the front of the
-- order: a claim late in a burst read past all the rows in flight. Rows
-- with a lease are found through `remind_delivery_leased` (0004); a retry
-- or deferral sets `lease_ms` back to 0 and the row is in these again. The
-- queue depth counts both sets. Append-only.
DROP INDEX remind_delivery_order;
CREATE INDEX remind_delivery_fresh ON remind_delivery((next_ms / 1000), rank, calendar, key)
    WHERE state = 'pending' AND lease_ms = 0;
DROP INDEX remind_delivery_next;
CREATE INDEX remind_delivery_fresh_next ON remind_delivery(next_ms)
    WHERE state = 'pending' AND lease_ms = 0;
