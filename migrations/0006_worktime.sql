-- Kairos store: working time per calendar (issue #11 §3). APPEND-ONLY.
--
-- * work_week   — the calendar's working weekdays as a bitset, Monday =
--                 bit 0 … Sunday = bit 6; 31 is Monday to Friday. Alarms
--                 with an X-KAIROS-WORKDAYS rule count and shift by it.
-- * is_holidays — 1 if this calendar is a holiday feed: every all-day
--                 event in it is a non-working day for every calendar.
--
-- Settings of this device: they are not synced.

ALTER TABLE calendars ADD COLUMN work_week INTEGER NOT NULL DEFAULT 31
    CHECK (work_week BETWEEN 1 AND 127);
ALTER TABLE calendars ADD COLUMN is_holidays INTEGER NOT NULL DEFAULT 0
    CHECK (is_holidays IN (0, 1));
