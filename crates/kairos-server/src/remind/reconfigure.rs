//! A changed fallback applies to the deliveries already queued (issue #21
//! §2): a rotated webhook secret or a new address must not leave two days
//! of queued reminders going to the old one, and a new "after N minutes"
//! moves them. Runs in `configure`'s transaction after the setting is
//! stored. Which queued deliveries a setting governs: its own calendar's,
//! or for `*` those of calendars without a setting of their own for that
//! channel. A change of `--always` applies to deliveries planned after it
//! (it decides whether a delivery exists at all).

use deadpool_postgres::GenericClient;
use rusqlite::{Connection, params};

use super::snooze::{self, Acked};
use super::{Fallback, from_ms};
use crate::store::StoreError;

/// One queued delivery a setting governs, with what its time derives from.
struct Queued {
    key: String,
    always: bool,
    due_ms: i64,
    next_ms: i64,
    trigger_ms: i64,
    acked: Option<Acked>,
}

/// Its new (due, next): N after the trigger or the snooze's end; an attempt
/// waiting for a retry or a deferral keeps its time unless the new due
/// time is later.
fn times(q: &Queued, f: &Fallback) -> (i64, i64) {
    let due = snooze::due(q.trigger_ms, q.acked.as_ref(), f.after_ms(), q.always);
    let next = if q.next_ms == q.due_ms {
        due
    } else {
        q.next_ms.max(due)
    };
    (due, next)
}

fn audit_line(f: &Fallback, due: i64) -> String {
    format!(
        "{} fallback changed by the operator: due {}",
        f.channel.name(),
        from_ms(due).to_rfc3339()
    )
}

const SELECT_SQLITE: &str = "SELECT d.key, d.always, d.due_ms, d.next_ms, i.due_ms,
        a.dismissed, a.snooze_hlc, a.snooze_until_ms
 FROM remind_delivery d
 JOIN remind_instance i ON i.account = d.account AND i.key = d.key
 LEFT JOIN remind_ack a ON a.account = d.account AND a.key = d.key
 WHERE d.account = ?1 AND d.channel = ?3 AND d.state = 'pending'
   AND (d.calendar = ?2 OR (?2 = '*' AND NOT EXISTS (
        SELECT 1 FROM remind_fallback f
        WHERE f.account = ?1 AND f.channel = ?3 AND f.calendar = d.calendar)))";

/// Applies `f` to the deliveries it governs (SQLite); how many changed.
pub(crate) fn sqlite(c: &Connection, f: &Fallback, now_ms: i64) -> Result<usize, StoreError> {
    let queued = c
        .prepare_cached(SELECT_SQLITE)?
        .query_map(params![f.account, f.calendar, f.channel.name()], |r| {
            let dismissed: Option<i64> = r.get(5)?;
            Ok(Queued {
                key: r.get(0)?,
                always: r.get::<_, i64>(1)? != 0,
                due_ms: r.get(2)?,
                next_ms: r.get(3)?,
                trigger_ms: r.get(4)?,
                acked: match dismissed {
                    Some(d) => Some(Acked {
                        dismissed: d != 0,
                        snooze: r
                            .get::<_, Option<String>>(6)?
                            .zip(r.get::<_, Option<i64>>(7)?),
                    }),
                    None => None,
                },
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for q in &queued {
        let (due, next) = times(q, f);
        c.prepare_cached(
            "UPDATE remind_delivery SET target = ?4, secret = ?5, due_ms = ?6, next_ms = ?7
             WHERE account = ?1 AND key = ?2 AND channel = ?3 AND state = 'pending'",
        )?
        .execute(params![
            f.account,
            q.key,
            f.channel.name(),
            f.target,
            f.secret,
            due,
            next
        ])?;
        super::sqlite::audit(c, &f.account, &q.key, now_ms, &audit_line(f, due))?;
    }
    Ok(queued.len())
}

/// Applies `f` to the deliveries it governs (PostgreSQL); how many changed.
pub(crate) async fn pg(
    c: &impl GenericClient,
    f: &Fallback,
    now_ms: i64,
) -> Result<usize, StoreError> {
    let sql = super::dollars(SELECT_SQLITE);
    let rows = c
        .query(&sql, &[&f.account, &f.calendar, &f.channel.name()])
        .await?;
    let queued: Vec<Queued> = rows
        .iter()
        .map(|r| Queued {
            key: r.get(0),
            always: r.get::<_, i64>(1) != 0,
            due_ms: r.get(2),
            next_ms: r.get(3),
            trigger_ms: r.get(4),
            acked: r.get::<_, Option<bool>>(5).map(|d| Acked {
                dismissed: d,
                snooze: r.get::<_, Option<String>>(6).zip(r.get(7)),
            }),
        })
        .collect();
    for q in &queued {
        let (due, next) = times(q, f);
        c.execute(
            "UPDATE remind_delivery SET target = $4, secret = $5, due_ms = $6, next_ms = $7
             WHERE account = $1 AND key = $2 AND channel = $3 AND state = 'pending'",
            &[
                &f.account,
                &q.key,
                &f.channel.name(),
                &f.target,
                &f.secret,
                &due,
                &next,
            ],
        )
        .await?;
        super::pg::audit(c, &f.account, &q.key, now_ms, &audit_line(f, due)).await?;
    }
    Ok(queued.len())
}
