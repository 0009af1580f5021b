-- Kairos store: two-way CalDAV accounts (issue #19 §2). APPEND-ONLY.
--
-- * caldav_accounts  — one per server and user: the URL the person gave,
--                      the principal and calendar home found by discovery.
--                      No password: it lives in the OS secret store (or the
--                      0600 file store), found by `secret_ref`.
-- * caldav_calendars — the calendars discovered in the home set, with their
--                      display name, colour and components (`VEVENT,VTODO`).
--                      `calendar_id` is the Kairos calendar it syncs into
--                      (NULL: listed, not chosen); `sync_token` the RFC 6578
--                      token of the last complete sync (NULL: none yet, or the
--                      server has no sync-collection and ETags are compared).
-- * caldav_objects   — per calendar object resource on the server: its href,
--                      the UID it holds, its ETag when last seen, and a hash
--                      of the series as Kairos stored it right after that sync
--                      (a different hash now means the series was edited here).

CREATE TABLE caldav_accounts (
    id          INTEGER PRIMARY KEY,
    url         TEXT    NOT NULL,
    username    TEXT    NOT NULL,
    principal   TEXT    NOT NULL,
    home        TEXT    NOT NULL,
    secret_ref  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (url, username)
) STRICT;

CREATE TABLE caldav_calendars (
    id          INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES caldav_accounts(id) ON DELETE CASCADE,
    href        TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    color       TEXT,
    components  TEXT    NOT NULL,
    calendar_id INTEGER UNIQUE REFERENCES calendars(id) ON DELETE SET NULL,
    sync_token  TEXT,
    synced_at   INTEGER,
    UNIQUE (account_id, href)
) STRICT;

CREATE TABLE caldav_objects (
    caldav_calendar_id INTEGER NOT NULL REFERENCES caldav_calendars(id) ON DELETE CASCADE,
    href        TEXT    NOT NULL,
    uid         TEXT    NOT NULL,
    etag        TEXT    NOT NULL,
    local_hash  TEXT    NOT NULL,
    PRIMARY KEY (caldav_calendar_id, href)
) STRICT, WITHOUT ROWID;

CREATE INDEX caldav_objects_uid ON caldav_objects (caldav_calendar_id, uid);
