-- Kairos store: ICS URL subscriptions (issue #19 §1). APPEND-ONLY.
--
-- One row per subscribed calendar: the calendar's content is replaced by
-- the feed's at each refresh that brings a new, readable body.
--
-- * url           — what is fetched (http/https; webcal:// is stored as
--                   https://).
-- * every_secs    — the refresh interval the user chose (jitter is added
--                   when the next refresh is planned).
-- * etag, last_modified — the validators of the last good body, sent back
--                   as If-None-Match / If-Modified-Since (a 304 is free).
-- * last_refresh  — the last attempt (ms), whatever its outcome.
-- * last_ok       — the last attempt that succeeded (200 applied or 304).
-- * last_error    — why the last attempt failed (NULL after a success).
-- * failures      — consecutive failed attempts (for the backoff).
-- * next_at       — when the next refresh is due (ms).
--
-- Settings of this device: not synced (the calendar's events are).
-- Deleting the calendar deletes its subscription.

CREATE TABLE subscriptions (
    calendar_id   INTEGER PRIMARY KEY REFERENCES calendars (id) ON DELETE CASCADE,
    url           TEXT    NOT NULL,
    every_secs    INTEGER NOT NULL CHECK (every_secs > 0),
    etag          TEXT,
    last_modified TEXT,
    last_refresh  INTEGER,
    last_ok       INTEGER,
    last_error    TEXT,
    failures      INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    next_at       INTEGER NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;
