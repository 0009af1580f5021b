-- The account's time zone for server-side reminders (`kairos-server
-- fallback ACCOUNT … --zone Europe/Berlin`): floating times (an event
-- with no zone, "the pill at 08:00") and working hours are read in it, as
-- the person's devices read them in theirs, so the server's reminder keys
-- and due times are the devices'. No row: UTC. Append-only.
CREATE TABLE remind_zone (
    account TEXT PRIMARY KEY REFERENCES accounts(id),
    zone    TEXT NOT NULL
);
