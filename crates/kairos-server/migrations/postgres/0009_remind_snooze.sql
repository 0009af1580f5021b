-- Snoozes followed (src/remind/snooze.rs): an acknowledgement row keeps
-- the merge state of its key (kairos-proto's AckState): dismissed or not,
-- and the winning snooze (its stamp and end). A snoozed reminder's
-- fallback waits until N after the snooze ends instead of being
-- cancelled. Rows written before this migration did not say which kind
-- they were: they stay what they meant then, dismissed. Append-only.
ALTER TABLE remind_ack ADD COLUMN dismissed BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE remind_ack ADD COLUMN snooze_hlc TEXT;
ALTER TABLE remind_ack ADD COLUMN snooze_until_ms BIGINT;
