//! What each write job does inside the writer's transaction, and
//! compaction. Plain functions on a connection: no threads, no channels.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_proto::{Body, Effect, Hlc, PushResult, SeqOp, Stored, ids, survivors};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Deserialize;

use super::writer::Committed;
use super::{Auth, Code, Joined, NewOp, Refusal, StoreError};
use crate::secrets;

pub(crate) fn to_u64(i: i64) -> u64 {
    u64::try_from(i).unwrap_or(0)
}

pub(crate) fn to_i64(u: u64) -> i64 {
    i64::try_from(u).unwrap_or(i64::MAX)
}

/// Stores a push's new ops and answers every op with its seq. The id's
/// primary key tells a reused id (`ON CONFLICT DO NOTHING` changes no
/// row): only then is its first seq looked up.
pub(crate) fn push(
    c: &Connection,
    account: &str,
    device: &str,
    ops: Vec<NewOp>,
) -> Result<(Vec<PushResult>, Option<Committed>), StoreError> {
    let prev = to_u64(
        c.prepare_cached("SELECT head FROM accounts WHERE id = ?1")?
            .query_row([account], |r| r.get::<_, i64>(0))?,
    );
    let mut head = prev;
    let mut results = Vec::with_capacity(ops.len());
    let mut fresh = Vec::with_capacity(ops.len());
    let mut known = c.prepare_cached("SELECT seq FROM op_ids WHERE account = ?1 AND op_id = ?2")?;
    let mut add_id = c.prepare_cached(
        "INSERT INTO op_ids (account, op_id, seq) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
    )?;
    let mut add_op =
        c.prepare_cached("INSERT INTO ops (account, seq, op_json) VALUES (?1, ?2, ?3)")?;
    for new in ops {
        let seq = to_i64(head + 1);
        if add_id.execute(params![account, new.op.id, seq])? == 0 {
            let first = known.query_row(params![account, new.op.id], |r| r.get::<_, i64>(0))?;
            results.push(PushResult {
                id: new.op.id,
                seq: to_u64(first),
            });
            continue;
        }
        head += 1;
        add_op.execute(params![account, seq, new.json])?;
        results.push(PushResult {
            id: new.op.id.clone(),
            seq: head,
        });
        fresh.push(SeqOp {
            seq: head,
            op: new.op,
        });
    }
    if head != prev {
        c.prepare_cached("UPDATE accounts SET head = ?1 WHERE id = ?2")?
            .execute(params![to_i64(head), account])?;
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

pub(crate) fn join(
    c: &Connection,
    code: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Result<Joined, Refusal>, StoreError> {
    let hash = secrets::sha256(code);
    let row = c
        .prepare_cached(
            "SELECT account, expires_ms, used_ms FROM pairing_codes WHERE code_sha256 = ?1",
        )?
        .query_row([&hash], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })
        .optional()?;
    let account = match row {
        None => return Ok(Err(Refusal::UnknownCode)),
        Some((_, _, Some(_))) => return Ok(Err(Refusal::UsedCode)),
        Some((_, expires, None)) if now.timestamp_millis() >= expires => {
            return Ok(Err(Refusal::ExpiredCode));
        }
        Some((account, _, None)) => account,
    };
    let device = secrets::new_device_id().map_err(StoreError::Random)?;
    let token = secrets::new_token().map_err(StoreError::Random)?;
    let now_ms = now.timestamp_millis();
    c.prepare_cached("UPDATE pairing_codes SET used_ms = ?1, used_by = ?2 WHERE code_sha256 = ?3")?
        .execute(params![now_ms, device, hash])?;
    c.prepare_cached(
        "INSERT INTO devices (id, account, name, token_sha256, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![device, account, name, secrets::sha256(&token), now_ms])?;
    Ok(Ok(Joined {
        auth: Auth { account, device },
        token,
    }))
}

/// A new pairing code for `account` valid for `ttl` (creating the account
/// first when `create` is set: `kairos-server invite`).
pub(crate) fn create_code(
    c: &Connection,
    account: &str,
    ttl: Duration,
    create: bool,
    now: DateTime<Utc>,
) -> Result<Code, StoreError> {
    let now_ms = now.timestamp_millis();
    if create {
        c.prepare_cached("INSERT OR IGNORE INTO accounts (id, created_ms) VALUES (?1, ?2)")?
            .execute(params![account, now_ms])?;
    }
    let code = secrets::new_pairing_code().map_err(StoreError::Random)?;
    let canonical = ids::normalize_pairing_code(&code).unwrap_or_default();
    let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    let expires_ms = now_ms.saturating_add(ttl_ms);
    c.prepare_cached(
        "INSERT INTO pairing_codes (code_sha256, account, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![secrets::sha256(&canonical), account, now_ms, expires_ms])?;
    let expires_at =
        DateTime::from_timestamp_millis(expires_ms).unwrap_or(DateTime::<Utc>::MAX_UTC);
    Ok(Code {
        account: account.to_owned(),
        code,
        expires_at,
    })
}

pub(crate) fn revoke(
    c: &Connection,
    account: &str,
    device: &str,
    now: DateTime<Utc>,
) -> Result<(bool, Option<Committed>), StoreError> {
    let changed = c
        .prepare_cached("UPDATE devices SET revoked_ms = ?1 WHERE id = ?2 AND account = ?3 AND revoked_ms IS NULL")?
        .execute(params![now.timestamp_millis(), device, account])?;
    let found = changed == 1
        || c.prepare_cached("SELECT 1 FROM devices WHERE id = ?1 AND account = ?2")?
            .exists(params![device, account])?;
    // Reported even when it was revoked already: closing twice is harmless.
    let event = found.then(|| Committed::Revoked {
        account: account.to_owned(),
        device: device.to_owned(),
    });
    Ok((found, event))
}

/// Of the accounts a group wrote to, those with `keep` ops or more since
/// their last compaction: one read for them all (a group can touch
/// thousands of accounts, each a transaction in `maybe_compact`, which
/// checks again).
pub(crate) fn due_for_compaction(
    conn: &mut Connection,
    accounts: &BTreeSet<String>,
    keep: u64,
) -> Result<Vec<String>, StoreError> {
    let tx = conn.transaction()?;
    let mut due = Vec::new();
    {
        let mut st =
            tx.prepare_cached("SELECT head - compacted_head >= ?2 FROM accounts WHERE id = ?1")?;
        for account in accounts {
            let over = st
                .query_row(params![account, to_i64(keep.max(1))], |r| {
                    r.get::<_, bool>(0)
                })
                .optional()?;
            if over == Some(true) {
                due.push(account.clone());
            }
        }
    }
    tx.commit()?;
    Ok(due)
}

/// What compaction needs of a stored op: its stamp and body. The op's other
/// fields (`id`, `device`, `base`) are skipped unread, not copied into
/// strings: compaction reads every op of the account's log.
#[derive(Deserialize)]
struct Decisive {
    hlc: Hlc,
    body: Body,
}

/// The entity, stamp and effect of the op stored at `seq` as `json`, all
/// compaction reads (both stores keep only the op's JSON).
pub(crate) fn decisive(seq: u64, json: &str) -> Result<(String, Hlc, Effect), StoreError> {
    let op: Decisive =
        serde_json::from_str(json).map_err(|e| StoreError::Corrupt(seq, e.to_string()))?;
    Ok((op.body.entity(), op.hlc, op.body.effect()))
}

/// Compacts `account` once `keep` ops arrived since the last compaction.
pub(crate) fn maybe_compact(
    conn: &mut Connection,
    account: &str,
    keep: u64,
) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let (head, floor, compacted) = tx.query_row(
        "SELECT head, floor, compacted_head FROM accounts WHERE id = ?1",
        [account],
        |r| Ok((to_u64(r.get(0)?), to_u64(r.get(1)?), to_u64(r.get(2)?))),
    )?;
    if head.saturating_sub(compacted) < keep.max(1) {
        return Ok(());
    }
    let cutoff = head.saturating_sub(keep);
    // What compaction needs of each op (its entity, stamp and effect) is
    // read from its JSON: the `ops` table keeps nothing else (0007).
    let rows: Vec<(u64, String, Hlc, Effect)> = {
        let mut stmt =
            tx.prepare_cached("SELECT seq, op_json FROM ops WHERE account = ?1 ORDER BY seq")?;
        let mut out = Vec::new();
        let mut rows = stmt.query([account])?;
        while let Some(r) = rows.next()? {
            let seq = to_u64(r.get(0)?);
            let json = r.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
            let (entity, hlc, effect) = decisive(seq, json)?;
            out.push((seq, entity, hlc, effect));
        }
        out
    };
    let keep_set = survivors(rows.iter().map(|(seq, entity, hlc, effect)| Stored {
        seq: *seq,
        entity,
        hlc,
        effect: *effect,
    }));
    let mut new_floor = floor;
    let mut removed = 0usize;
    {
        let mut del = tx.prepare_cached("DELETE FROM ops WHERE account = ?1 AND seq = ?2")?;
        for (seq, ..) in rows
            .iter()
            .filter(|(s, ..)| *s <= cutoff && !keep_set.contains(s))
        {
            del.execute(params![account, to_i64(*seq)])?;
            new_floor = new_floor.max(*seq);
            removed += 1;
        }
    }
    tx.execute(
        "UPDATE accounts SET floor = ?1, compacted_head = ?2 WHERE id = ?3",
        params![to_i64(new_floor), to_i64(head), account],
    )?;
    tx.commit()?;
    tracing::info!(%account, removed, floor = new_floor, head, "compacted");
    Ok(())
}
