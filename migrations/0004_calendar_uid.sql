-- Kairos store: stable calendar identity (issue #10, sync). APPEND-ONLY.
--
-- A calendar gets a random `uid` (32 lowercase hex digits) that never
-- changes; its `name` stays a label the user may edit. Reminder instance
-- keys start with the calendar's uid instead of its (escaped) name, so
-- renaming a calendar no longer re-fires its reminders and two devices
-- compute the same key for the same event content.
--
-- Existing rows are re-keyed in place: the escaped-name prefix of every
-- instance key, snooze link and audit row becomes the uid. Instances keep
-- their state, so a reminder already delivered or acknowledged under its
-- old key is the same row under the new one and does not fire again.
-- (The prefix was `escape(name) + "/"`, with '%' → '%25' then '/' → '%2F'.)

ALTER TABLE calendars ADD COLUMN uid TEXT NOT NULL DEFAULT '';
UPDATE calendars SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX calendars_by_uid ON calendars (uid);

CREATE TEMP TABLE rekey AS
SELECT id, uid, replace(replace(name, '%', '%25'), '/', '%2F') || '/' AS old, uid || '/' AS new
FROM calendars;

UPDATE instances SET key = r.new || substr(instances.key, length(r.old) + 1)
FROM rekey AS r
WHERE r.id = instances.calendar_id AND substr(instances.key, 1, length(r.old)) = r.old;

UPDATE instances SET snooze_of = r.new || substr(instances.snooze_of, length(r.old) + 1)
FROM rekey AS r
WHERE r.id = instances.calendar_id AND substr(instances.snooze_of, 1, length(r.old)) = r.old;

UPDATE audit SET key = r.new || substr(audit.key, length(r.old) + 1)
FROM rekey AS r
WHERE substr(audit.key, 1, length(r.old)) = r.old;

DROP TABLE rekey;
