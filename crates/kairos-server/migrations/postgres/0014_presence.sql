-- Which instance holds a session of which device (`presence.rs`), so that
-- a device list answered by one instance also shows the devices connected
-- to the others. Each instance writes only what changed (a session opened
-- or closed) and its own row in `instances` every two seconds; a device is
-- connected while the instance that holds it is alive. Unlogged: the
-- instances write it all again within seconds of losing it (a crash
-- empties unlogged tables), so it is worth neither WAL nor a replica.
-- `account` lets `account delete` find it like every other table.
-- Append-only.
CREATE UNLOGGED TABLE instances (
    id TEXT PRIMARY KEY,
    alive_until_ms BIGINT NOT NULL
);
CREATE UNLOGGED TABLE presence (
    account TEXT NOT NULL,
    device TEXT NOT NULL,
    instance TEXT NOT NULL,
    PRIMARY KEY (device, instance)
);
