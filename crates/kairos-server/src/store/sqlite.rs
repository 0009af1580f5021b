//! The embedded SQLite backend: one file in the data directory, a writer
//! thread that commits in groups (`writer.rs`) and a pool of read
//! connections (`read.rs`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;

use super::read::Readers;
use super::writer::{Committed, Job, Writer};
use super::{Code, StoreError, schema, tx};

pub(crate) struct Sqlite {
    pub(crate) writer: Writer,
    pub(crate) readers: Arc<Readers>,
}

impl Sqlite {
    pub(crate) fn open(
        data: &Path,
        compact_keep: u64,
        on_commit: Box<dyn Fn(Committed) + Send>,
    ) -> Result<Self, StoreError> {
        let conn = schema::create_and_migrate(data)?;
        let path = schema::db_path(data);
        let writer = Writer::start(conn, &path, compact_keep, on_commit)?;
        Ok(Self {
            writer,
            readers: Arc::new(Readers::new(path)),
        })
    }

    pub(crate) fn send(&self, job: Job) -> Result<(), StoreError> {
        self.writer.send(job)
    }

    pub(crate) fn invite(data: &Path, account: &str, ttl: Duration) -> Result<Code, StoreError> {
        let mut conn = schema::create_and_migrate(data)?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let code = tx::create_code(&tx, account, ttl, true, Utc::now())?;
        tx.commit()?;
        Ok(code)
    }
}
