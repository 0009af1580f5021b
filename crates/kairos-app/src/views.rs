//! The views' window query: every occurrence of every visible calendar
//! whose start lies in a range of wall times in the display zone.

use chrono::Duration;
use kairos_core::Limits;
use kairos_store::CalendarId;

use crate::App;
use crate::api::{ApiError, EventRef, OccurrenceView, RangeQuery};
use crate::convert::{fmt_date, fmt_wall, instant, wall, wall_in};
use crate::error::ApiResult;

/// Widest range one query may ask for.
pub const MAX_RANGE_DAYS: i64 = 400;
/// Longest occurrence shown when it starts before the range.
pub const MAX_SPAN_DAYS: i64 = 14;

impl App {
    /// The occurrences starting in `[from, to)`, sorted by start.
    ///
    /// # Errors
    /// A malformed or too wide range; a limit of the core (named).
    pub fn occurrences(&self, q: &RangeQuery) -> ApiResult<Vec<OccurrenceView>> {
        let tz = self.display_tz();
        let (from, to) = (wall(&q.from, "from")?, wall(&q.to, "to")?);
        if to <= from || to - from > Duration::days(MAX_RANGE_DAYS) {
            return Err(ApiError::invalid(format!(
                "range: `to` must be after `from` and at most {MAX_RANGE_DAYS} days later"
            )));
        }
        // Occurrences that start before the window but end inside it are
        // shown too (up to MAX_SPAN_DAYS long).
        let (f, t) = (
            instant(from, tz) - Duration::days(MAX_SPAN_DAYS),
            instant(to, tz),
        );
        let limits = Limits::default();
        let mut out = Vec::new();
        for cal in self.list_calendars()?.into_iter().filter(|c| c.visible) {
            let mut text = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n");
            for e in self.store.events_of(CalendarId(cal.id))? {
                text.push_str(e.ics.trim_end());
                text.push_str("\r\n");
            }
            text.push_str("END:VCALENDAR\r\n");
            let parsed = kairos_core::ics::parse_calendar(text.as_bytes(), &limits)
                .map_err(|e| ApiError::internal(format!("calendar {:?}: {e}", cal.name)))?;
            let occ = kairos_core::query::occurrences(&parsed, f, t, tz, &limits)
                .map_err(|e| ApiError::invalid(format!("calendar {:?}: {e}", cal.name)))?;
            for o in occ {
                let ev = o.event;
                let all_day = o.start.date.is_some();
                let (start, end) = if let Some(d) = o.start.date {
                    let last = o.end.and_then(|e| e.date).unwrap_or(d + Duration::days(1));
                    let last = last.max(d + Duration::days(1));
                    if last <= from.date() {
                        continue;
                    }
                    (fmt_date(d), fmt_date(last))
                } else {
                    let s = wall_in(o.start.instant, tz);
                    let e = o.end.map_or(s, |e| wall_in(e.instant, tz));
                    if e <= from && s < from {
                        continue;
                    }
                    (fmt_wall(s), fmt_wall(e.max(s)))
                };
                out.push(OccurrenceView {
                    event: EventRef {
                        calendar_id: cal.id,
                        uid: ev.uid.clone(),
                        recurrence_id: o.recurrence_id.map(|m| {
                            m.date.map_or_else(
                                || m.instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                                fmt_date,
                            )
                        }),
                    },
                    title: ev.summary.clone().unwrap_or_else(|| "(no title)".into()),
                    start,
                    end,
                    all_day,
                    color: cal.color.clone(),
                    location: ev.location.clone(),
                    recurring: o.recurrence_id.is_some(),
                    has_alarms: !ev.alarms.is_empty(),
                });
            }
        }
        out.sort_by(|a, b| a.start.cmp(&b.start).then_with(|| a.title.cmp(&b.title)));
        Ok(out)
    }
}
