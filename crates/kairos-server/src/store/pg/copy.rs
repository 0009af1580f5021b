//! Rows for `COPY … FROM STDIN (FORMAT binary)`, encoded by hand into one
//! buffer and sent in one message. COPY inserts a page's worth of rows at
//! a time (one WAL record per heap page instead of one per row) and skips
//! the executor's per-row work of an `INSERT … SELECT FROM unnest(…)`.
//!
//! The format (PostgreSQL's `COPY` page, "Binary Format"): a signature,
//! flags and header-extension length; per row the field count (`i16`) and
//! per field its length (`i32`; `-1` would be NULL) and its bytes in the type's
//! binary form (`text`: UTF-8; `bigint`: 8 bytes big-endian); a trailer
//! of `-1` (`i16`).

use std::future::Future;
use std::io::Cursor;

use deadpool_postgres::Transaction;
use futures_util::SinkExt;
use tokio_postgres::{CopyInSink, Statement};

use super::super::StoreError;

/// Where a `COPY` runs: the writer's transaction, or its connection in a
/// transaction it began itself (`batch.rs`).
pub(super) trait CopyIn: Sync {
    fn copy_rows(
        &self,
        statement: &Statement,
    ) -> impl Future<Output = Result<CopyInSink<Cursor<Vec<u8>>>, tokio_postgres::Error>> + Send;
}

impl CopyIn for Transaction<'_> {
    fn copy_rows(
        &self,
        statement: &Statement,
    ) -> impl Future<Output = Result<CopyInSink<Cursor<Vec<u8>>>, tokio_postgres::Error>> + Send
    {
        tokio_postgres::Transaction::copy_in(self, statement)
    }
}

impl CopyIn for tokio_postgres::Client {
    fn copy_rows(
        &self,
        statement: &Statement,
    ) -> impl Future<Output = Result<CopyInSink<Cursor<Vec<u8>>>, tokio_postgres::Error>> + Send
    {
        tokio_postgres::Client::copy_in(self, statement)
    }
}

const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

/// One `COPY` statement's rows.
pub(super) struct Rows {
    buf: Vec<u8>,
    fields: i16,
    /// Fields written in the current row (checked at each row's start).
    in_row: i16,
    rows: u64,
}

impl Rows {
    /// Rows of `fields` columns each.
    pub(super) fn new(fields: i16) -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(SIGNATURE);
        buf.extend_from_slice(&0_i32.to_be_bytes()); // flags: no OIDs
        buf.extend_from_slice(&0_i32.to_be_bytes()); // no header extension
        Self {
            buf,
            fields,
            in_row: fields,
            rows: 0,
        }
    }

    /// Starts a row; its `fields` fields follow.
    pub(super) fn row(&mut self) -> &mut Self {
        debug_assert_eq!(self.in_row, self.fields, "the previous row is short");
        self.buf.extend_from_slice(&self.fields.to_be_bytes());
        self.in_row = 0;
        self.rows += 1;
        self
    }

    pub(super) fn text(&mut self, s: &str) -> &mut Self {
        // Every text comes from one WebSocket message, which the
        // handshake caps at `kairos_proto::MAX_FRAME`, far below i32::MAX.
        let len = i32::try_from(s.len()).unwrap_or(i32::MAX);
        self.buf.extend_from_slice(&len.to_be_bytes());
        self.buf.extend_from_slice(s.as_bytes());
        self.in_row += 1;
        self
    }

    pub(super) fn int8(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&8_i32.to_be_bytes());
        self.buf.extend_from_slice(&v.to_be_bytes());
        self.in_row += 1;
        self
    }

    /// Runs `statement` (a prepared `COPY … FROM STDIN (FORMAT binary)`,
    /// so that it costs no round trip to prepare each time, naming as
    /// many columns as each row has) with these rows; an error (a
    /// duplicate key, say) spoils the transaction, as any failed statement
    /// does.
    pub(super) async fn send(
        mut self,
        tx: &impl CopyIn,
        statement: &Statement,
    ) -> Result<u64, StoreError> {
        debug_assert_eq!(self.in_row, self.fields, "the last row is short");
        self.buf.extend_from_slice(&(-1_i16).to_be_bytes());
        let expected = self.rows;
        let sink = tx.copy_rows(statement).await?;
        futures_util::pin_mut!(sink);
        sink.send(Cursor::new(self.buf)).await?;
        let n = sink.as_mut().finish().await?;
        debug_assert_eq!(n, expected);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_the_binary_copy_format() {
        let mut r = Rows::new(2);
        r.row().text("ab").int8(1);
        let mut want = SIGNATURE.to_vec();
        want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0, 2]);
        want.extend_from_slice(&[0, 0, 0, 2, b'a', b'b']);
        want.extend_from_slice(&[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(r.buf, want);
        assert_eq!(r.rows, 1);
    }
}
