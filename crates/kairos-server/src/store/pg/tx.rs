//! What each write job does inside the writer's transaction: the SQLite
//! store's `tx.rs` in PostgreSQL's dialect (compaction: `compactor.rs`).

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Transaction};
use kairos_proto::{Op, PushResult, SeqOp, ids};

use super::super::tx::{to_i64, to_u64};
use super::super::writer::Committed;
use super::super::{Auth, Code, Joined, NewOp, Refusal, StoreError};
use crate::secrets;

/// The account's row is locked already (the writer locks every account of
/// its group first, in id order, so two instances never deadlock on them).
/// Two statements whatever the number of ops (the known ids, then the
/// insert from arrays): a round trip per op made ingest 8× slower.
pub(super) async fn push(
    c: &Transaction<'_>,
    account: &str,
    device: &str,
    ops: Vec<NewOp>,
) -> Result<(Vec<PushResult>, Option<Committed>), StoreError> {
    let get_head = c
        .prepare_cached("SELECT head, num FROM accounts WHERE id = $1")
        .await?;
    let row = c.query_one(&get_head, &[&account]).await?;
    let (prev, num): (u64, i64) = (to_u64(row.get(0)), row.get(1));
    let find = c
        .prepare_cached("SELECT op_id, seq FROM ops WHERE account_num = $1 AND op_id = ANY($2)")
        .await?;
    let ids: Vec<&str> = ops.iter().map(|o| o.op.id.as_str()).collect();
    // Ids stored before (the protocol refuses an id twice in one push).
    let mut known: HashMap<String, u64> = c
        .query(&find, &[&num, &ids])
        .await?
        .iter()
        .map(|r| (r.get(0), to_u64(r.get(1))))
        .collect();
    let mut head = prev;
    let mut results = Vec::with_capacity(ops.len());
    let mut fresh = Vec::new();
    let mut rows = Rows::default();
    for new in ops {
        if let Some(&seq) = known.get(&new.op.id) {
            results.push(PushResult { id: new.op.id, seq });
            continue;
        }
        head += 1;
        known.insert(new.op.id.clone(), head);
        let op = rows.add(head, new);
        results.push(PushResult {
            id: op.id.clone(),
            seq: head,
        });
        fresh.push(SeqOp { seq: head, op });
    }
    if head != prev {
        rows.insert(c, num).await?;
        let set = c
            .prepare_cached("UPDATE accounts SET head = $1 WHERE id = $2")
            .await?;
        c.execute(&set, &[&to_i64(head), &account]).await?;
    }
    let event = (!fresh.is_empty()).then(|| Committed::Ops {
        account: account.to_owned(),
        from: device.to_owned(),
        ops: fresh,
        prev,
        head,
    });
    Ok((results, event))
}

/// New ops as columns, for one `INSERT … SELECT FROM unnest(…)` each.
#[derive(Default)]
struct Rows {
    seq: Vec<i64>,
    id: Vec<String>,
    json: Vec<String>,
}

impl Rows {
    /// Adds the columns of `new` (made by the caller) and gives back its op.
    fn add(&mut self, seq: u64, new: NewOp) -> Op {
        self.seq.push(to_i64(seq));
        self.id.push(new.op.id.clone());
        self.json.push(new.json);
        new.op
    }

    async fn insert(&self, c: &Transaction<'_>, num: i64) -> Result<(), StoreError> {
        let add = c
            .prepare_cached(
                "INSERT INTO ops (account_num, seq, op_id, op_json)
                 SELECT $1, s, i, j FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(s, i, j)",
            )
            .await?;
        c.execute(&add, &[&num, &self.seq, &self.id, &self.json])
            .await?;
        Ok(())
    }
}

pub(super) async fn join(
    c: &Transaction<'_>,
    code: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Result<Joined, Refusal>, StoreError> {
    let hash = secrets::sha256(code);
    let now_ms = now.timestamp_millis();
    let device = secrets::new_device_id().map_err(StoreError::Random)?;
    // One statement decides: of two instances consuming the same code at
    // once, the second waits on the row and then finds it used.
    let take = c
        .prepare_cached(
            "UPDATE pairing_codes SET used_ms = $1, used_by = $2
             WHERE code_sha256 = $3 AND used_ms IS NULL AND expires_ms > $1
             RETURNING account",
        )
        .await?;
    let account: String = match c.query_opt(&take, &[&now_ms, &device, &hash]).await? {
        Some(r) => r.get(0),
        None => {
            let why = c
                .prepare_cached("SELECT used_ms FROM pairing_codes WHERE code_sha256 = $1")
                .await?;
            return Ok(Err(match c.query_opt(&why, &[&hash]).await? {
                None => Refusal::UnknownCode,
                Some(r) if r.get::<_, Option<i64>>(0).is_some() => Refusal::UsedCode,
                Some(_) => Refusal::ExpiredCode,
            }));
        }
    };
    let token = secrets::new_token().map_err(StoreError::Random)?;
    let add = c
        .prepare_cached(
            "INSERT INTO devices (id, account, name, token_sha256, created_ms) VALUES ($1, $2, $3, $4, $5)",
        )
        .await?;
    c.execute(
        &add,
        &[&device, &account, &name, &secrets::sha256(&token), &now_ms],
    )
    .await?;
    Ok(Ok(Joined {
        auth: Auth { account, device },
        token,
    }))
}

/// A new pairing code for `account` valid for `ttl` (creating the account
/// first when `create` is set: `kairos-server invite`).
pub(super) async fn create_code(
    c: &Transaction<'_>,
    account: &str,
    ttl: Duration,
    create: bool,
    now: DateTime<Utc>,
) -> Result<Code, StoreError> {
    let now_ms = now.timestamp_millis();
    if create {
        c.execute(
            "INSERT INTO accounts (id, created_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&account, &now_ms],
        )
        .await?;
    }
    let code = secrets::new_pairing_code().map_err(StoreError::Random)?;
    let canonical = ids::normalize_pairing_code(&code).unwrap_or_default();
    let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    let expires_ms = now_ms.saturating_add(ttl_ms);
    let add = c
        .prepare_cached(
            "INSERT INTO pairing_codes (code_sha256, account, created_ms, expires_ms) VALUES ($1, $2, $3, $4)",
        )
        .await?;
    c.execute(
        &add,
        &[&secrets::sha256(&canonical), &account, &now_ms, &expires_ms],
    )
    .await?;
    let expires_at =
        DateTime::from_timestamp_millis(expires_ms).unwrap_or(DateTime::<Utc>::MAX_UTC);
    Ok(Code {
        account: account.to_owned(),
        code,
        expires_at,
    })
}

pub(super) async fn revoke(
    c: &Transaction<'_>,
    account: &str,
    device: &str,
    now: DateTime<Utc>,
) -> Result<(bool, Option<Committed>), StoreError> {
    // The account's count moves with it: the other instances' repair of a
    // lost hint (`relay.rs`, migration 0013).
    let set = c
        .prepare_cached(
            "WITH d AS (UPDATE devices SET revoked_ms = coalesce(revoked_ms, $1) WHERE id = $2 AND account = $3 RETURNING 1)
             UPDATE accounts SET revocations = revocations + 1 WHERE id = $3 AND EXISTS (SELECT 1 FROM d)",
        )
        .await?;
    let found = c
        .execute(&set, &[&now.timestamp_millis(), &device, &account])
        .await?
        == 1;
    // Reported even when it was revoked already: closing twice is harmless.
    let event = found.then(|| Committed::Revoked {
        account: account.to_owned(),
        device: device.to_owned(),
    });
    Ok((found, event))
}
