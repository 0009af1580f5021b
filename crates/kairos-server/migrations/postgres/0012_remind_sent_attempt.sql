-- The attempt a success was (1 for the first), recorded with it: on
-- PostgreSQL a delivered queue row is deleted when its success is recorded
-- (`remind/finish.rs`: no second row version, no index entry), so `why`
-- reads the attempt from here. NULL in rows recorded before this
-- migration: their queue row is still there and says it. Append-only.
ALTER TABLE remind_sent ADD COLUMN attempt BIGINT;
