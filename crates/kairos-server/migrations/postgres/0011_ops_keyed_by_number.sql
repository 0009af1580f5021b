-- One row and integer keys for a pushed op (issue #21 §3): `ops` takes
-- the op's id, `op_ids` goes, and `ops` names its account by a number.
--
-- Every pushed op cost PostgreSQL two heap rows and two b-tree entries,
-- each entry led by the account's text id: `ops` (account, seq, op_json)
-- under its primary key, `op_ids` (account, op_id, seq) under its own. A
-- 64-device ingest spent about a fifth of PostgreSQL's time comparing
-- those keys (`_bt_compare`, `bttextcmp`, `nocache_index_getattr`: a
-- column after a text column has no fixed offset). Now it is one row,
-- (account_num, seq, op_id, op_json), with two keys: the primary key
-- (account_num, seq), which catch-up, export, the reminders' replica and
-- compaction read by, and the unique key (account_num, op_id), which
-- answers a reused id with its first seq and refuses to store it twice
-- (the writer's COPY fails on it, as it failed on `op_ids`' key).
-- `accounts.num` is the account's number, handed out once, never reused.
--
-- `op_ids` kept the ids of ops that compaction had deleted, so a device
-- re-sending one got its first seq back. Compaction now keeps such an
-- op's row and only empties it (`op_json` NULL); every reader of ops
-- skips the empty rows, so an id stays known as long as it did before.
--
-- The table is rebuilt, not altered (the six columns 0008 dropped still
-- cost every new row a null bitmap): each id of `op_ids` becomes a row,
-- with its op when the op is still stored and empty when compaction
-- removed it; an op without an id row (none is written that way) keeps
-- the id its JSON holds. Ops or ids of an account that no longer exists
-- stop the migration (none is left by `delete-account`): nothing is
-- dropped silently. It takes about as long as copying both tables.
-- Append-only.
ALTER TABLE accounts ADD COLUMN num BIGINT GENERATED ALWAYS AS IDENTITY;
ALTER TABLE accounts ADD CONSTRAINT accounts_num_key UNIQUE (num);
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM op_ids i WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = i.account))
       OR EXISTS (SELECT 1 FROM ops o WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = o.account))
    THEN
        RAISE EXCEPTION 'ops or op ids of an account that no longer exists: delete them (or recreate the account) and migrate again';
    END IF;
END
$$;
CREATE TABLE ops_new (
    account_num BIGINT NOT NULL,
    seq         BIGINT NOT NULL,
    op_id       TEXT COLLATE "C" NOT NULL,
    op_json     TEXT
);
INSERT INTO ops_new (account_num, seq, op_id, op_json)
SELECT a.num, i.seq, i.op_id, o.op_json
FROM op_ids i
JOIN accounts a ON a.id = i.account
LEFT JOIN ops o ON o.account = i.account AND o.seq = i.seq;
INSERT INTO ops_new (account_num, seq, op_id, op_json)
SELECT a.num, o.seq, o.op_json::json ->> 'id', o.op_json
FROM ops o
JOIN accounts a ON a.id = o.account
WHERE NOT EXISTS (SELECT 1 FROM op_ids i WHERE i.account = o.account AND i.seq = o.seq);
DROP TABLE ops;
DROP TABLE op_ids;
ALTER TABLE ops_new RENAME TO ops;
ALTER TABLE ops ADD CONSTRAINT ops_pkey PRIMARY KEY (account_num, seq);
ALTER TABLE ops ADD CONSTRAINT ops_op_id_key UNIQUE (account_num, op_id);
