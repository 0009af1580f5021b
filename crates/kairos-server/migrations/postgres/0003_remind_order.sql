-- The PostgreSQL twin of migrations/0003_remind_order.sql: server-side
-- reminders, the order a backlog drains in (src/remind/claim.rs):
-- the same second's deliveries go out by task PRIORITY (1 highest … 9,
-- then none), then calendar, then key. Append-only.

-- The instance's task PRIORITY (1–9), NULL for none (events, and tasks
-- without one).
ALTER TABLE remind_instance ADD COLUMN priority BIGINT;

-- A delivery's place in its second: `rank` is the priority, 10 for none;
-- `calendar` is the instance's calendar uid.
ALTER TABLE remind_delivery ADD COLUMN rank BIGINT NOT NULL DEFAULT 10;
ALTER TABLE remind_delivery ADD COLUMN calendar TEXT NOT NULL DEFAULT '';
UPDATE remind_delivery SET calendar = coalesce((SELECT i.calendar FROM remind_instance i
    WHERE i.account = remind_delivery.account AND i.key = remind_delivery.key), '');

-- The claim's order: (due second, rank, calendar, key) among pending rows.
CREATE INDEX remind_delivery_order ON remind_delivery((next_ms / 1000), rank, calendar, key)
    WHERE state = 'pending';
