-- Kairos store: events keep the engine's typed form (issue #18 §2). APPEND-ONLY.
--
-- `events.ics` becomes `events.body`, and `form` says what the body is:
-- * 'typed' — the engine's versioned stored form of one component (JSON
--             beginning {"v":N,…}; the version rule is the engine's, see
--             kairos-engine `series::typed`). Every write since schema 9.
-- * 'ics'   — one VEVENT/VTODO block of iCalendar text, as Kairos wrote
--             before schema 9. The engine converts such rows in place when
--             it opens the database; a row it cannot read stays 'ics' (and
--             is reported), never dropped.
-- The store still does not read either: both are opaque text here.

ALTER TABLE events RENAME COLUMN ics TO body;
ALTER TABLE events ADD COLUMN form TEXT NOT NULL DEFAULT 'ics' CHECK (form IN ('ics', 'typed'));

-- The engine looks for rows still to convert each time it starts.
CREATE INDEX events_legacy ON events (calendar_id) WHERE form = 'ics';
