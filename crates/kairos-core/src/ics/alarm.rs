//! `VALARM` → [`Alarm`]. Lenient reading skips an alarm it cannot place in
//! time (no `TRIGGER`, a bad trigger), reads one with a valid `TRIGGER` and
//! no `ACTION` as a `DISPLAY` alarm, and keeps one whose repetitions are
//! broken, without them: the first reminder still fires.

use chrono::Datelike;
use chrono_tz::Tz;

use super::dates::{Reader, err};
use super::import::{once, raw};
use super::lexer::Component;
use super::values;
use super::warning::At;
use crate::error::{Error, Limits};
use crate::model::{Alarm, Related, Trigger, When};

const SKIPPED: &str = "alarm skipped";
const NO_REPEAT: &str = "its repetitions ignored";

/// The alarm, or `None` when lenient reading skipped it.
pub(crate) fn alarm(c: &Component, r: &mut Reader<'_>, uid: &str) -> Result<Option<Alarm>, Error> {
    let at = At::new("VALARM", Some(uid));
    let trig = match once(c, "TRIGGER", at, r)? {
        Some(t) => t,
        None => {
            let e = Error::syntax(c.line, "VALARM has no TRIGGER");
            return r.sink.repair(e, at, SKIPPED).map(|()| None);
        }
    };
    let trigger = match trigger(trig, r, at) {
        Ok(t) => t,
        Err(e) => return r.sink.repair(e, at, SKIPPED).map(|()| None),
    };
    let mut a = Alarm {
        uid: None,
        action: "DISPLAY".into(),
        trigger,
        repeat: 0,
        interval: None,
        description: None,
        summary: None,
        acknowledged: None,
        snooze_of: None,
        extra: Vec::new(),
    };
    let mut saw_action = false;
    let mut bad_repeat = false;
    for p in &c.props {
        match p.name.as_str() {
            "TRIGGER" => {}
            "ACTION" => {
                a.action = p.value.trim().to_ascii_uppercase();
                saw_action = true;
            }
            "UID" => a.uid = Some(p.value.trim().to_owned()),
            "DESCRIPTION" => a.description = Some(values::text(&p.value)),
            "SUMMARY" => a.summary = Some(values::text(&p.value)),
            "REPEAT" => match p.value.trim().parse() {
                Ok(n) => a.repeat = n,
                Err(_) => {
                    let e = err(p, format!("{:?} is not a repeat count", p.value));
                    r.sink.repair(e, at, NO_REPEAT)?;
                    bad_repeat = true;
                }
            },
            "DURATION" => match values::duration(&p.value) {
                Ok(d) if d.is_non_positive() => {
                    let e = err(p, "the interval between alarm repetitions must be positive");
                    r.sink.repair(e, at, NO_REPEAT)?;
                    bad_repeat = true;
                }
                Ok(d) => a.interval = Some(d),
                Err(m) => {
                    r.sink.repair(err(p, m), at, NO_REPEAT)?;
                    bad_repeat = true;
                }
            },
            "ACKNOWLEDGED" => match values::utc_date_time(&p.value) {
                Ok(t) => a.acknowledged = Some(t),
                Err(m) => r.sink.repair(err(p, m), at, "ignored")?,
            },
            "RELATED-TO"
                if p.param("RELTYPE")
                    .is_some_and(|t| t.eq_ignore_ascii_case("SNOOZE")) =>
            {
                a.snooze_of = Some(p.value.trim().to_owned());
            }
            crate::escalation::PROPERTY => {
                escalation(&a, p, r, at);
                a.extra.push(raw(p));
            }
            // Kept as written (it round-trips); a rule this version cannot
            // read is only noted: the alarm goes off at its plain TRIGGER,
            // as in clients that do not know the property.
            name if name.eq_ignore_ascii_case(crate::workdays::PROPERTY) => {
                if let Err(m) = crate::workdays::parse(&p.value) {
                    let problem = || format!("{name}: {m}");
                    r.sink.note(
                        p.line,
                        at,
                        problem,
                        "rule ignored: its plain TRIGGER is used",
                    );
                }
                a.extra.push(raw(p));
            }
            _ => a.extra.push(raw(p)),
        }
    }
    if !saw_action {
        // The file plainly asks for a reminder at a valid TRIGGER: ring it as
        // the plain reminder most clients show (Outlook writes these).
        let e = Error::syntax(c.line, "VALARM has no ACTION");
        r.sink.repair(e, at, "read as a DISPLAY alarm")?;
    }
    if bad_repeat {
        a.repeat = 0;
        a.interval = None;
    }
    match (a.repeat, a.interval) {
        (0, _) => {}
        (n, None) => {
            let p = c.prop("REPEAT").unwrap_or(trig);
            let e = err(
                p,
                format!("REPEAT:{n} needs a DURATION between repetitions"),
            );
            r.sink.repair(e, at, NO_REPEAT)?;
            a.repeat = 0;
        }
        // A hard limit: an error in both modes.
        (n, Some(_)) if n > Limits::default().max_alarm_repeat => {
            let p = c.prop("REPEAT").unwrap_or(trig);
            return Err(err(
                p,
                format!(
                    "REPEAT:{n} is more than the limit of {}",
                    Limits::default().max_alarm_repeat
                ),
            ));
        }
        _ => {}
    }
    Ok(Some(a))
}

/// At import: a rule that does not read, or a second rule, is a warning
/// (lenient reading; strict reading accepts it, as it accepts any X-
/// property) and changes nothing: the alarm stays a plain single alarm and
/// the property is kept for export.
fn escalation(alarm: &Alarm, p: &super::lexer::Property, r: &mut Reader<'_>, at: At<'_>) {
    if alarm
        .extra
        .iter()
        .any(|e| crate::escalation::value_of(&e.line).is_some())
    {
        r.sink.note(
            p.line,
            at,
            || {
                format!(
                    "{}: a second rule in one VALARM",
                    crate::escalation::PROPERTY
                )
            },
            "ignored; the first rule counts",
        );
    } else if let Err(m) = crate::escalation::parse(&p.value) {
        r.sink.note(
            p.line,
            at,
            || format!("{}: {m}", crate::escalation::PROPERTY),
            "the alarm stays a single reminder (no escalation)",
        );
    }
}

fn trigger(
    trig: &super::lexer::Property,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<Trigger, Error> {
    let absolute = trig
        .param("VALUE")
        .is_some_and(|v| v.eq_ignore_ascii_case("DATE-TIME"));
    if absolute
        || (values::duration(&trig.value).is_err() && values::date_time(&trig.value).is_ok())
    {
        return match r.when(trig, at)? {
            When::Date(_) => Err(err(trig, "an absolute TRIGGER must be a DATE-TIME")),
            // It is kept (and written back) in UTC, which a zone's offset can
            // push outside the years 0000–9999 that DATE-TIME can write.
            w if !(0..=9999).contains(&w.instant(Tz::UTC).year()) => Err(err(
                trig,
                "the TRIGGER falls outside the years 0000-9999 in UTC",
            )),
            w => Ok(Trigger::Absolute(w.instant(Tz::UTC))),
        };
    }
    let related = match trig
        .param("RELATED")
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        None | Some("START") => Related::Start,
        Some("END") => Related::End,
        Some(other) => {
            return Err(err(
                trig,
                format!("RELATED={other} is neither START nor END"),
            ));
        }
    };
    Ok(Trigger::Relative {
        offset: values::duration(&trig.value).map_err(|m| err(trig, m))?,
        related,
    })
}
