-- Kairos store, schema version 2: what the desktop app needs per calendar.
--
-- APPEND-ONLY: never edit once shipped (see 0001_init.sql).
--
-- * visible        — shown in the views (1) or hidden (0). A hidden
--                    calendar's reminders still fire: hiding is about the
--                    view, not about being told.
-- * default_alarms — JSON array of the reminders a new event in this calendar
--                    starts with (the app's AlarmSpec objects); opaque to SQL
--                    beyond being valid JSON.

ALTER TABLE calendars ADD COLUMN visible INTEGER NOT NULL DEFAULT 1
    CHECK (visible IN (0, 1));
ALTER TABLE calendars ADD COLUMN default_alarms TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(default_alarms));
