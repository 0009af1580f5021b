//! Storing a round's planned instances and their deliveries on
//! PostgreSQL in a few set-based statements (arrays through `unnest`)
//! rather than four or five round trips an instance: the acknowledgements
//! of the round's keys, the new instances (and a `planned` audit line for
//! each), their states, and the deliveries. Measured before: 100,000
//! instances took 78–148 s to queue with two instances
//! (docs/benchmarks.md). The rules are `sqlite.rs`'s, row by row there:
//! an instance dismissed on a device is stored `acked`; a withdrawn one
//! gets no delivery, an acknowledged one only "always" deliveries; a
//! delivery already sent (its `remind_sent` row: a delivered queue row is
//! deleted) or queued is not queued again.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;

use super::{Stored, Write, effective, ms, rank};
use crate::store::StoreError;

const INSTANCES: &str =
    "INSERT INTO remind_instance (account, key, calendar, due_ms, payload, state, priority)
     SELECT $1::text, k, c, d, p, s, r
     FROM unnest($2::text[], $3::text[], $4::int8[], $5::text[], $6::text[], $7::int8[])
         AS u(k, c, d, p, s, r)
     ON CONFLICT DO NOTHING
     RETURNING key, due_ms";

const PLANNED: &str = "INSERT INTO remind_audit (account, key, at_ms, event)
     SELECT $1::text, k, $2::int8, e FROM unnest($3::text[], $4::text[]) AS u(k, e)";

const DELIVERIES: &str = "INSERT INTO remind_delivery
       (account, key, channel, due_ms, next_ms, state, always, target, secret, rank, calendar)
     SELECT $1::text, k, ch, d, d, 'pending', al, t, s, r, c
     FROM unnest($2::text[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::text[],
                 $8::int8[], $9::text[]) AS u(k, ch, d, al, t, s, r, c)
     WHERE NOT EXISTS (SELECT 1 FROM remind_sent
                       WHERE account = $1 AND key = u.k AND channel = u.ch)
     ON CONFLICT DO NOTHING";

/// Stores `w.instances` and their deliveries (see the module doc).
pub(super) async fn plan(
    c: &impl GenericClient,
    w: &Write,
    out: &mut Stored,
) -> Result<(), StoreError> {
    if w.instances.is_empty() {
        return Ok(());
    }
    let (a, now) = (&w.account, w.now_ms);
    let keys: Vec<&str> = w.instances.iter().map(|i| i.key.as_str()).collect();
    let acks = super::ack_store::pg_acked_all(c, a, &keys).await?;

    let states: Vec<&str> = keys
        .iter()
        .map(|k| {
            if acks.get(*k).is_some_and(|r| r.dismissed) {
                "acked"
            } else {
                "pending"
            }
        })
        .collect();
    let col =
        |f: fn(&super::Instance) -> &str| -> Vec<&str> { w.instances.iter().map(f).collect() };
    let (calendars, payloads) = (col(|i| &i.calendar), col(|i| &i.payload));
    let dues: Vec<i64> = w.instances.iter().map(|i| ms(i.due)).collect();
    let priorities: Vec<Option<i64>> = w
        .instances
        .iter()
        .map(|i| i.priority.map(i64::from))
        .collect();
    let new = c
        .query(
            INSTANCES,
            &[a, &keys, &calendars, &dues, &payloads, &states, &priorities],
        )
        .await?;
    if !new.is_empty() {
        out.planned += new.len();
        let (new_keys, events): (Vec<String>, Vec<String>) = new
            .iter()
            .map(|r| {
                let due = super::from_ms(r.get(1));
                (r.get(0), format!("planned: due {}", due.to_rfc3339()))
            })
            .unzip();
        c.execute(PLANNED, &[a, &now, &new_keys, &events]).await?;
    }

    let current: HashMap<String, String> = c
        .query(
            "SELECT key, state FROM remind_instance WHERE account = $1 AND key = ANY($2)",
            &[a, &keys],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut d = Deliveries::default();
    for inst in &w.instances {
        let state = current.get(&inst.key).map_or("withdrawn", String::as_str);
        let ack = acks.get(&inst.key);
        for f in effective(&w.fallbacks, &inst.calendar) {
            if state == "withdrawn" || (state == "acked" && !f.always) {
                continue;
            }
            d.key.push(&inst.key);
            d.channel.push(f.channel.name());
            d.due.push(super::snooze::due(
                ms(inst.due),
                ack,
                f.after_ms(),
                f.always,
            ));
            d.always.push(i64::from(f.always));
            d.target.push(&f.target);
            d.secret.push(f.secret.as_deref());
            d.rank.push(rank(inst.priority));
            d.calendar.push(&inst.calendar);
        }
    }
    if !d.key.is_empty() {
        let n = c
            .execute(
                DELIVERIES,
                &[
                    a,
                    &d.key,
                    &d.channel,
                    &d.due,
                    &d.always,
                    &d.target,
                    &d.secret,
                    &d.rank,
                    &d.calendar,
                ],
            )
            .await?;
        out.deliveries += usize::try_from(n).unwrap_or(0);
    }
    Ok(())
}

/// The columns of the deliveries to queue.
#[derive(Default)]
struct Deliveries<'a> {
    key: Vec<&'a str>,
    channel: Vec<&'a str>,
    due: Vec<i64>,
    always: Vec<i64>,
    target: Vec<&'a str>,
    secret: Vec<Option<&'a str>>,
    rank: Vec<i64>,
    calendar: Vec<&'a str>,
}
