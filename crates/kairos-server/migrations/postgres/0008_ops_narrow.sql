-- A narrower op row and byte-order keys, for ingest (issue #21 §3).
--
-- `ops` keeps the account, the seq and the op's JSON. The other columns
-- repeat what the JSON holds: catch-up and export read only `op_json`,
-- `op_ids` answers for the ids, and compaction (the only reader of
-- entity, hlc, kind and until_ms) now takes them from the JSON it parses.
-- They were ~40 % of each row and of its WAL record. PostgreSQL marks the
-- columns dropped without rewriting the table: old rows keep their bytes
-- until they are deleted, new rows do not take them.
--
-- The keys of `ops` and `op_ids` compare in byte order (COLLATE "C")
-- instead of the database's default collation: a cluster made in a
-- C.UTF-8 or en_US locale compares text keys through strcoll, on every
-- step down each index at every insert and lookup. Nothing changes for
-- the queries: equality is byte equality under either collation, and no
-- query orders by these columns (ops are read by account, in seq order).
-- The two primary keys are rebuilt; the tables are not rewritten.
-- Append-only.
ALTER TABLE ops
    DROP COLUMN op_id,
    DROP COLUMN device,
    DROP COLUMN entity,
    DROP COLUMN hlc,
    DROP COLUMN kind,
    DROP COLUMN until_ms;
ALTER TABLE ops ALTER COLUMN account TYPE TEXT COLLATE "C";
ALTER TABLE op_ids
    ALTER COLUMN account TYPE TEXT COLLATE "C",
    ALTER COLUMN op_id TYPE TEXT COLLATE "C";
