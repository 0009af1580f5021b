-- A snooze after the fallback went out sends it again for the return
-- (src/remind/ack_store.rs): a delivery is now (account, key, channel,
-- round), `round` 0 the trigger's fallback (every row so far), a snooze's
-- return the snooze's end (ms); `remind_sent`'s primary key, the
-- guarantee of one success, takes the round too. See the SQLite twin,
-- migrations/0010_remind_snooze_return.sql. The column has a constant
-- default (no table rewrite); each primary key is built again.
-- Append-only.
ALTER TABLE remind_delivery ADD COLUMN round BIGINT NOT NULL DEFAULT 0;
ALTER TABLE remind_delivery DROP CONSTRAINT remind_delivery_pkey,
    ADD CONSTRAINT remind_delivery_pkey PRIMARY KEY (account, key, channel, round);
ALTER TABLE remind_sent ADD COLUMN round BIGINT NOT NULL DEFAULT 0;
ALTER TABLE remind_sent DROP CONSTRAINT remind_sent_pkey,
    ADD CONSTRAINT remind_sent_pkey PRIMARY KEY (account, key, channel, round);
