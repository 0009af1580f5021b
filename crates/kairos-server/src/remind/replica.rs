//! The server's replica of one account's calendars, and the reminder
//! instances they hold in a window. Pure: the caller reads the state and
//! the new ops from the store and writes back what this computes.
//!
//! The keys are the devices' keys: planning goes through the engine's own
//! `materialise::plan_with` (core instance key + `@` + schedule
//! fingerprint), never a copy of it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use kairos_core::Limits;
use kairos_core::workdays::{self, MON_FRI, WorkTime};
use kairos_engine::materialise::{CalendarLabel, plan_with};
use kairos_proto::{Body, Hlc, Op, Verdict, lww};

/// The winning op of each register (`calendar/UID`, `work/UID`,
/// `series/CAL/UID`), by entity.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Entity → (stamp, winning op).
    pub entities: BTreeMap<String, (Hlc, Op)>,
}

/// What applying new ops changed.
#[derive(Debug, Default)]
pub struct Changes {
    /// Registers whose winner changed: (entity, stamp, op as JSON).
    pub entities: Vec<(String, String, String)>,
    /// Dismissals and snoozes from devices, in op order (`snooze` merges
    /// them into the stored state of their key).
    pub acks: Vec<Op>,
}

/// One reminder instance to keep in the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The devices' key for it.
    pub key: String,
    /// The calendar's uid.
    pub calendar: String,
    /// When it goes off.
    pub due: DateTime<Utc>,
    /// What to tell (the engine's payload, as JSON).
    pub payload: String,
    /// The task's `PRIORITY`, 1 (highest) to 9; `None` for an event or a
    /// task without one. A backlog drains in this order within a second.
    pub priority: Option<u8>,
}

/// One or more VEVENT/VTODO texts as an iCalendar object.
fn wrap(components: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Kairos//server//EN\r\n{}\r\nEND:VCALENDAR\r\n",
        components.trim_end()
    )
}

/// The `PRIORITY` of the task `uid` in `cal` (its master, else the first
/// component with that uid).
fn priority(cal: &kairos_core::model::Calendar, uid: &str) -> Option<u8> {
    let mut of_uid = cal.events.iter().filter(|e| e.uid == uid);
    let first = of_uid.clone().next();
    let master = of_uid.find(|e| e.recurrence_id.is_none()).or(first)?;
    master.todo.as_ref().and_then(|t| t.priority)
}

impl State {
    /// Applies `ops` (in seq order) by the protocol's merge rules; the
    /// acknowledgements are handed on as they are.
    pub fn apply(&mut self, ops: &[Op], out: &mut Changes) {
        for op in ops {
            match &op.body {
                Body::ReminderDismiss { .. } | Body::ReminderSnooze { .. } => {
                    out.acks.push(op.clone());
                }
                _ => {
                    let entity = op.entity();
                    let current = self.entities.get(&entity).map(|(h, _)| h);
                    if lww(current, &op.hlc) == Verdict::Apply {
                        // Ops decoded from the store always encode again.
                        let json = serde_json::to_string(op).unwrap_or_default();
                        out.entities.retain(|(e, _, _)| e != &entity);
                        out.entities
                            .push((entity.clone(), op.hlc.to_string(), json));
                        self.entities.insert(entity, (op.hlc.clone(), op.clone()));
                    }
                }
            }
        }
    }

    /// The zone the account's devices last told (`account.zone`), if any.
    #[must_use]
    pub fn zone(&self) -> Option<&str> {
        match self.entities.get("zone") {
            Some((
                _,
                Op {
                    body: Body::AccountZone { zone },
                    ..
                },
            )) => Some(zone),
            _ => None,
        }
    }

    /// Whether `calendar` is live (put, not deleted).
    fn live(&self, calendar: &str) -> bool {
        matches!(
            self.entities.get(&format!("calendar/{calendar}")),
            Some((
                _,
                Op {
                    body: Body::CalendarPut { .. },
                    ..
                }
            ))
        )
    }

    /// The all-day dates of every live calendar marked as holidays
    /// (`calendar.work … holidays`), as far around `[from, to)` as a
    /// working-day rule can move a trigger: the devices' holidays
    /// (`kairos_engine::workdays::holiday_dates`), from the calendar's
    /// synced series. A holiday calendar that does not parse is named in
    /// `bad` and left out.
    fn holidays(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limits: &Limits,
        bad: &mut Vec<String>,
    ) -> BTreeSet<NaiveDate> {
        let mut out = BTreeSet::new();
        let (from, to) = (from - workdays::max_move(), to + workdays::max_move());
        for (_, op) in self.entities.values() {
            let Body::CalendarWork {
                calendar,
                holidays: true,
                ..
            } = &op.body
            else {
                continue;
            };
            if !self.live(calendar) {
                continue;
            }
            let mut components = String::new();
            for (_, op) in self.entities.values() {
                if let Body::SeriesPut {
                    calendar: c, ics, ..
                } = &op.body
                    && c == calendar
                {
                    components.push_str(ics.trim_end());
                    components.push_str("\r\n");
                }
            }
            let dates = kairos_core::ics::parse_calendar(wrap(&components).as_bytes(), limits)
                .and_then(|feed| workdays::holidays(&feed, from, to, limits));
            match dates {
                Ok(d) => out.extend(d),
                Err(e) => bad.push(format!("holidays of calendar {calendar}: {e}")),
            }
        }
        out
    }

    /// Every instance of every live series of every live calendar with a
    /// trigger in `[from, to)`. Floating times are read in `zone` (the
    /// account's, see `round::plan`: devices read them in theirs, so the
    /// keys of floating events are the devices' only when the zones
    /// agree). A series that does not parse is skipped and named in the
    /// second list.
    #[must_use]
    pub fn plan(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        zone: chrono_tz::Tz,
    ) -> (Vec<Instance>, Vec<String>) {
        let limits = Limits::default();
        let mut out = Vec::new();
        let mut bad = Vec::new();
        let holidays = self.holidays(from, to, &limits, &mut bad);
        for (_, op) in self.entities.values() {
            let Body::SeriesPut { calendar, uid, ics } = &op.body else {
                continue;
            };
            let Some((_, cal_op)) = self.entities.get(&format!("calendar/{calendar}")) else {
                continue;
            };
            let Body::CalendarPut { name, .. } = &cal_op.body else {
                continue; // deleted
            };
            let week = match self.entities.get(&format!("work/{calendar}")) {
                Some((
                    _,
                    Op {
                        body: Body::CalendarWork { week, .. },
                        ..
                    },
                )) => *week,
                _ => MON_FRI,
            };
            let work = WorkTime {
                week,
                holidays: holidays.clone(),
            };
            let text = wrap(ics);
            let label = CalendarLabel {
                uid: calendar,
                name,
            };
            let planned =
                kairos_core::ics::parse_calendar(text.as_bytes(), &limits).and_then(|cal| {
                    let p = plan_with(label, &cal, from, to, zone, &limits, &work)?;
                    Ok((cal, p))
                });
            match planned {
                Ok((cal, planned)) => out.extend(planned.into_iter().map(|p| Instance {
                    priority: priority(&cal, &p.uid),
                    key: p.key,
                    calendar: calendar.clone(),
                    due: p.trigger,
                    payload: serde_json::to_string(&p.payload).unwrap_or_else(|_| "{}".into()),
                })),
                Err(e) => bad.push(format!("series {calendar}/{uid}: {e}")),
            }
        }
        (out, bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(n: u64, ms: u64, body: Body) -> Op {
        let mut clock = kairos_proto::HlcClock::new("d1", None);
        Op::new(n, clock.issue(ms), body)
    }

    const ICS: &str = "BEGIN:VEVENT\r\nUID:e1\r\nSUMMARY:Talk\r\nDTSTART:20261206T100000Z\r\n\
        BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:x\r\nEND:VALARM\r\nEND:VEVENT";

    #[test]
    fn plans_the_devices_keys_and_forgets_deleted_series() {
        let mut s = State::default();
        let mut ch = Changes::default();
        let cal = Body::CalendarPut {
            calendar: "c1".into(),
            name: "Work".into(),
            color: None,
        };
        let put = Body::SeriesPut {
            calendar: "c1".into(),
            uid: "e1".into(),
            ics: ICS.into(),
        };
        s.apply(&[op(1, 1, cal), op(2, 2, put)], &mut ch);
        let from = "2026-12-06T00:00:00Z".parse().expect("valid");
        let to = "2026-12-07T00:00:00Z".parse().expect("valid");
        let (got, bad) = s.plan(from, to, chrono_tz::UTC);
        assert!(bad.is_empty());
        assert_eq!(got.len(), 1);
        assert!(
            got[0].key.starts_with("c1/e1/2026-12-06T10:00:00Z/#0@"),
            "{}",
            got[0].key
        );
        assert_eq!(
            got[0].due,
            "2026-12-06T09:45:00Z"
                .parse::<DateTime<Utc>>()
                .expect("valid")
        );

        let del = Body::SeriesDelete {
            calendar: "c1".into(),
            uid: "e1".into(),
            caldav: false,
        };
        s.apply(
            &[
                op(3, 3, del),
                op(4, 4, Body::ReminderDismiss { key: "k".into() }),
            ],
            &mut ch,
        );
        assert!(s.plan(from, to, chrono_tz::UTC).0.is_empty());
        let keys: Vec<_> = ch
            .acks
            .iter()
            .filter_map(super::super::snooze::key)
            .collect();
        assert_eq!(keys, ["k"]);
        assert_eq!(ch.entities.len(), 2, "calendar and series, the series once");
    }

    #[test]
    fn a_holiday_calendars_days_move_a_working_day_rule_as_on_the_devices() {
        let cal = |uid: &str| Body::CalendarPut {
            calendar: uid.into(),
            name: uid.into(),
            color: None,
        };
        let put = |calendar: &str, uid: &str, ics: String| Body::SeriesPut {
            calendar: calendar.into(),
            uid: uid.into(),
            ics,
        };
        // Monday 7 December is a holiday; the alarm goes off at 09:00 that
        // day, or on the next working day at the same time.
        let holiday = "BEGIN:VEVENT\r\nUID:h1\r\nSUMMARY:Holiday\r\nDTSTART;VALUE=DATE:20261207\r\nEND:VEVENT";
        let ev = "BEGIN:VEVENT\r\nUID:e1\r\nSUMMARY:Report\r\nDTSTART:20261207T100000Z\r\n\
            BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT1H\r\nX-KAIROS-WORKDAYS:v=1;shift=next\r\n\
            DESCRIPTION:x\r\nEND:VALARM\r\nEND:VEVENT";
        let mut s = State::default();
        let mut ch = Changes::default();
        s.apply(
            &[
                op(1, 1, cal("c1")),
                op(2, 2, cal("hol")),
                op(3, 3, put("c1", "e1", ev.into())),
                op(4, 4, put("hol", "h1", holiday.into())),
            ],
            &mut ch,
        );
        let from = "2026-12-06T00:00:00Z".parse().expect("valid");
        let to = "2026-12-10T00:00:00Z".parse().expect("valid");
        let due = |s: &State| {
            let (got, bad) = s.plan(from, to, chrono_tz::UTC);
            assert!(bad.is_empty(), "{bad:?}");
            got[0].due.to_rfc3339()
        };
        assert_eq!(
            due(&s),
            "2026-12-07T09:00:00+00:00",
            "not marked: a working day"
        );
        let work = Body::CalendarWork {
            calendar: "hol".into(),
            week: MON_FRI,
            holidays: true,
        };
        s.apply(&[op(5, 5, work)], &mut ch);
        assert_eq!(due(&s), "2026-12-08T09:00:00+00:00", "the next working day");
        s.apply(
            &[op(
                6,
                6,
                Body::CalendarDelete {
                    calendar: "hol".into(),
                },
            )],
            &mut ch,
        );
        assert_eq!(
            due(&s),
            "2026-12-07T09:00:00+00:00",
            "a deleted calendar: none"
        );
    }
}
