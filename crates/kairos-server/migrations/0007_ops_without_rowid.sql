-- The op log keyed by `(account, seq)` alone, WITHOUT ROWID: a pushed op is
-- one b-tree insert here (it was two: the rowid table and its primary-key
-- index) beside its `op_ids` entry. Only `op_json` is kept with the key:
-- `op_id`, `device`, `entity`, `hlc`, `kind` and `until_ms` repeated what
-- `op_json` holds (compaction now reads them from it, src/store/tx.rs;
-- `op_ids` has every id). Every row moves over, in key order. Append-only.
CREATE TABLE ops_by_seq (
    account TEXT NOT NULL REFERENCES accounts(id),
    seq     INTEGER NOT NULL,
    op_json TEXT NOT NULL,
    PRIMARY KEY (account, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO ops_by_seq (account, seq, op_json)
    SELECT account, seq, op_json FROM ops ORDER BY account, seq;
DROP TABLE ops;
ALTER TABLE ops_by_seq RENAME TO ops;
