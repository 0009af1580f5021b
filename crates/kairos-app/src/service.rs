//! [`App`]: one store connection and the methods behind the IPC commands
//! that touch events. Calendars, views, reminders and settings are in their
//! own modules as further `impl App` blocks.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Calendar, Event};
use kairos_store::{CalendarId, CalendarSettings, Store};

use crate::api::{
    ApiError, DeleteEvent, EventDetail, EventDraft, EventRef, MoveEvent, NotifierState, SaveEvent,
    Scope, Settings, SyncStatus,
};
use crate::convert::{date, fmt_date, fmt_minute, instant, rid_when, wall, wall_in, zone};
use crate::edit::{self, draft_of, event_of, shift_exceptions, until_before, without};
use crate::error::ApiResult;

/// The desktop app's state: a store connection and the settings.
pub struct App {
    pub(crate) store: Store,
    pub(crate) path: PathBuf,
    pub(crate) system_tz: Tz,
    pub(crate) settings: Settings,
    /// How far ahead reminders are materialised (the engine's horizon).
    pub(crate) horizon: Duration,
    /// Set by the shell after probing the notification service.
    pub notifier: NotifierState,
    /// Set by the shell from the host's sync state ([`App::set_sync`]).
    pub(crate) sync: SyncStatus,
    uid_seq: u64,
}

impl App {
    /// Opens (creating if needed) the database at `path`. `system_tz` is the
    /// machine's zone (IANA name). A database with no calendar gets one
    /// called "Personal".
    ///
    /// # Errors
    /// The store cannot be opened (named, classified), a bad zone name.
    pub fn open(path: &Path, system_tz: &str, now: DateTime<Utc>) -> ApiResult<Self> {
        let store = Store::open(path)?;
        let mut app = Self {
            store,
            path: path.to_owned(),
            system_tz: zone(system_tz, "system time zone").unwrap_or(Tz::UTC),
            settings: crate::settings::defaults(),
            horizon: kairos_engine::engine::Config::default().horizon,
            notifier: NotifierState::Unavailable,
            sync: SyncStatus::off(),
            uid_seq: 0,
        };
        app.settings = app.load_settings()?;
        if app.store.calendars()?.is_empty() {
            app.store.ensure_calendar("Personal", now)?;
        }
        app.follow_zone(now)?;
        Ok(app)
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Settings → Sync on this database (used without the app's lock: its
    /// requests wait on the network).
    #[must_use]
    pub fn sync_accounts(&self) -> crate::SyncAccounts {
        crate::SyncAccounts::new(&self.path)
    }

    /// The store (for the shell's engine wiring and tests).
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    pub(crate) fn calendar(&self, id: i64) -> ApiResult<CalendarSettings> {
        self.store
            .read(|r| r.calendar_by_id(CalendarId(id)))?
            .ok_or_else(|| ApiError::not_found(format!("calendar {id} does not exist (any more)")))
    }

    /// The stored events of calendar `cal` (only series `uid`, if given),
    /// read back by the engine (its typed stored form).
    pub(crate) fn read_calendar(&self, cal: i64, uid: Option<&str>) -> ApiResult<Calendar> {
        let mut rows = self.store.events_of(CalendarId(cal))?;
        rows.retain(|e| uid.is_none_or(|u| e.uid == u));
        kairos_engine::series::read_calendar(&rows, &format!("#{cal}")).map_err(|e| {
            let what = uid.map_or_else(|| format!("calendar {cal}"), |u| format!("event {u:?}"));
            ApiError::internal(format!("stored {what} no longer reads: {e}"))
        })
    }

    /// Every component (master and overrides) of series `uid`.
    pub(crate) fn series(&self, cal: i64, uid: &str) -> ApiResult<Vec<Event>> {
        let parsed = self.read_calendar(cal, Some(uid))?;
        if parsed.events.is_empty() {
            return Err(ApiError::not_found(format!(
                "event {uid:?} does not exist (any more)"
            )));
        }
        Ok(parsed.events)
    }

    fn write_series(
        &mut self,
        cal: i64,
        uid: &str,
        comps: &[Event],
        now: DateTime<Utc>,
    ) -> ApiResult<()> {
        let name = self.calendar(cal)?.name;
        let floating = self.display_tz();
        kairos_engine::import::replace_series(
            &mut self.store,
            &name,
            uid,
            comps,
            now,
            self.horizon,
            floating,
        )?;
        Ok(())
    }

    fn new_uid(&mut self, now: DateTime<Utc>) -> String {
        self.uid_seq += 1;
        format!(
            "{:x}-{:x}-{}@kairos",
            now.timestamp_micros(),
            std::process::id(),
            self.uid_seq
        )
    }

    /// The form for a new event at `start` (wall time in the display zone,
    /// or a date for an all-day event) in calendar `calendar_id`, with that
    /// calendar's default reminders.
    ///
    /// # Errors
    /// Unknown calendar, a malformed `start`.
    pub fn new_draft(
        &self,
        calendar_id: i64,
        start: &str,
        _now: DateTime<Utc>,
    ) -> ApiResult<EventDraft> {
        let cal = self.calendar(calendar_id)?;
        let all_day = start.len() == 10;
        let at = if all_day {
            date(start, "start")?.and_time(chrono::NaiveTime::MIN)
        } else {
            wall(start, "start")?
        };
        let mut d = edit::blank(at, all_day, self.display_tz());
        d.calendar_id = calendar_id;
        d.alarms = serde_json::from_str(&cal.default_alarms).unwrap_or_default();
        Ok(d)
    }

    /// The editor's content for an event or one occurrence.
    ///
    /// # Errors
    /// Unknown event or occurrence.
    pub fn get_event(&self, r: &EventRef) -> ApiResult<EventDetail> {
        let comps = self.series(r.calendar_id, &r.uid)?;
        let floating = self.display_tz();
        let master = master_of(&comps);
        let rule = master.rrules.first().map(|x| x.source.clone());
        let mut draft = match &r.recurrence_id {
            Some(rid) => {
                let when = rid_when(rid, master, floating)?;
                match comps.iter().find(|c| c.recurrence_id == Some(when)) {
                    Some(ov) => draft_of(ov, None, rule, floating),
                    None => draft_of(master, Some(when), rule, floating),
                }
            }
            None => draft_of(master, None, rule, floating),
        };
        draft.calendar_id = r.calendar_id;
        Ok(EventDetail {
            event: r.clone(),
            draft,
            recurring: master.is_recurring(),
            history: self.lost_edits(r.calendar_id, &r.uid)?,
        })
    }

    /// Saves the editor: a new event, or a change to `scope` of an existing one.
    ///
    /// # Errors
    /// Invalid fields (named), unknown event or calendar, store failures.
    pub fn save_event(&mut self, req: SaveEvent, now: DateTime<Utc>) -> ApiResult<EventRef> {
        let target = self.calendar(req.draft.calendar_id)?.id.0;
        self.writable(target)?;
        if let Some(r) = &req.event {
            self.writable(r.calendar_id)?;
        }
        let Some(r) = req.event else {
            let uid = self.new_uid(now);
            let ev = event_of(&req.draft, &uid, None, None, now)?;
            self.write_series(target, &uid, &[ev], now)?;
            return Ok(EventRef {
                calendar_id: target,
                uid,
                recurrence_id: None,
            });
        };
        let comps = self.series(r.calendar_id, &r.uid)?;
        let floating = self.display_tz();
        let master = master_of(&comps).clone();
        let rid = match (&r.recurrence_id, master.is_recurring()) {
            (Some(s), true) => Some(rid_when(s, &master, floating)?),
            _ => None,
        };
        let scope = match rid {
            Some(w) if w == master.start && req.scope == Scope::ThisAndFollowing => Scope::All,
            Some(_) => req.scope,
            None => Scope::All,
        };
        match (scope, rid) {
            (Scope::This, Some(w)) => {
                let base = comps
                    .iter()
                    .find(|c| c.recurrence_id == Some(w))
                    .unwrap_or(&master);
                let ov = event_of(&req.draft, &r.uid, Some(w), Some(base), now)?;
                let mut out: Vec<Event> = comps
                    .iter()
                    .filter(|c| c.recurrence_id != Some(w))
                    .cloned()
                    .collect();
                out.push(ov);
                self.write_series(r.calendar_id, &r.uid, &out, now)?;
                Ok(r)
            }
            (Scope::ThisAndFollowing, Some(w)) => {
                let head = until_before(&comps, w, floating)?;
                let uid = self.new_uid(now);
                let tail = event_of(&req.draft, &uid, None, Some(&master), now)?;
                self.write_series(r.calendar_id, &r.uid, &head, now)?;
                self.write_series(target, &uid, &[tail], now)?;
                Ok(EventRef {
                    calendar_id: target,
                    uid,
                    recurrence_id: None,
                })
            }
            _ => {
                // The form shows one occurrence; "all" applies its change of
                // time to the series' own start.
                let mut draft = req.draft.clone();
                let shown = rid.unwrap_or(master.start);
                let (ds, _) = edit::draft_span(&draft)?;
                let by = ds.local() - shown.local();
                let (ms, _) = edit::span(&master, floating);
                let length = edit::draft_span(&draft)?.1.local() - ds.local();
                let start = ms + by;
                if draft.all_day {
                    draft.start = fmt_date(start.date());
                    draft.end = fmt_date(
                        (start + length - Duration::days(1))
                            .date()
                            .max(start.date()),
                    );
                } else {
                    draft.start = fmt_minute(start);
                    draft.end = fmt_minute(start + length);
                }
                let new_master = event_of(&draft, &r.uid, None, Some(&master), now)?;
                let mut out = vec![new_master];
                if !out[0].rrules.is_empty() {
                    out.extend(comps.iter().filter(|c| c.recurrence_id.is_some()).cloned());
                    shift_exceptions(&mut out, by);
                }
                let out = out
                    .iter()
                    .map(|e| edit::normalise(e, None))
                    .collect::<ApiResult<Vec<_>>>()?;
                if target != r.calendar_id {
                    self.write_series(r.calendar_id, &r.uid, &[], now)?;
                }
                self.write_series(target, &r.uid, &out, now)?;
                Ok(EventRef {
                    calendar_id: target,
                    uid: r.uid,
                    recurrence_id: r.recurrence_id,
                })
            }
        }
    }

    /// Drag in a view: shifts start and end by minutes of the display
    /// zone's wall clock.
    ///
    /// # Errors
    /// As [`App::save_event`]; an end moved before the start.
    pub fn move_event(&mut self, req: &MoveEvent, now: DateTime<Utc>) -> ApiResult<()> {
        self.writable(req.event.calendar_id)?;
        let detail = self.get_event(&req.event)?;
        let mut d = detail.draft;
        let (s, e) = edit::draft_span(&d)?;
        let (ds, de) = (
            Duration::minutes(req.start_delta_minutes),
            Duration::minutes(req.end_delta_minutes),
        );
        let (ns, ne) = if d.all_day {
            (s.local() + ds, e.local() + de)
        } else {
            // The deltas are what was dragged in the view, on the display
            // zone's wall clock. Applied there, an event kept in another
            // zone lands where it was dropped, also when only one of the
            // two zones changes its offset in between.
            let tz = zone(&d.tz, "time zone")?;
            let shown = self.display_tz();
            let moved = |w, by| wall_in(instant(wall_in(instant(w, tz), shown) + by, shown), tz);
            (moved(s.local(), ds), moved(e.local(), de))
        };
        if ne < ns {
            return Err(ApiError::invalid("end: moved before the start"));
        }
        if d.all_day {
            d.start = fmt_date(ns.date());
            d.end = fmt_date((ne - Duration::days(1)).date().max(ns.date()));
        } else {
            d.start = fmt_minute(ns);
            d.end = fmt_minute(ne);
        }
        self.save_event(
            SaveEvent {
                event: Some(req.event.clone()),
                scope: req.scope,
                draft: d,
            },
            now,
        )?;
        Ok(())
    }

    /// Deletes an event, one occurrence, or it and the following ones.
    ///
    /// # Errors
    /// Unknown event, store failures.
    pub fn delete_event(&mut self, req: &DeleteEvent, now: DateTime<Utc>) -> ApiResult<()> {
        let r = &req.event;
        self.writable(r.calendar_id)?;
        let comps = self.series(r.calendar_id, &r.uid)?;
        let floating = self.display_tz();
        let master = master_of(&comps);
        let rid = match (&r.recurrence_id, master.is_recurring()) {
            (Some(s), true) => Some(rid_when(s, master, floating)?),
            _ => None,
        };
        let out = match (req.scope, rid) {
            (Scope::This, Some(w)) => without(&comps, w)?,
            (Scope::ThisAndFollowing, Some(w)) if w != master.start => {
                until_before(&comps, w, floating)?
            }
            _ => Vec::new(),
        };
        self.write_series(r.calendar_id, &r.uid, &out, now)
    }
}

/// The master of a series (the component without `RECURRENCE-ID`), or its
/// first override when only overrides were stored. `comps` is never empty
/// ([`App::series`] refuses that).
fn master_of(comps: &[Event]) -> &Event {
    comps
        .iter()
        .find(|c| c.recurrence_id.is_none())
        .unwrap_or(&comps[0])
}
