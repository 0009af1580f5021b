//! An event's sync history for the editor: the edits of it that lost to
//! another device's later edit, read from the notes the engine writes
//! when it applies ops (`kairos log`'s `sync` lines), newest first.

use kairos_engine::sync::apply::read_conflict_note;
use kairos_engine::sync::keys;
use kairos_store::CalendarId;

use crate::App;
use crate::api::LostEdit;
use crate::error::ApiResult;

/// At most this many entries (an event edited on two devices for years).
const MAX_ENTRIES: usize = 20;

impl App {
    /// The lost edits of series `uid` in calendar `cal`, newest first.
    ///
    /// # Errors
    /// Store failures.
    pub(crate) fn lost_edits(&self, cal: i64, uid: &str) -> ApiResult<Vec<LostEdit>> {
        let Some(cal_uid) = self
            .store
            .calendars()?
            .into_iter()
            .find(|c| c.id == CalendarId(cal))
            .map(|c| c.uid)
        else {
            return Ok(Vec::new());
        };
        let here = self.store.meta_get(keys::DEVICE)?.unwrap_or_default();
        let mut out: Vec<LostEdit> = self
            .store
            .audit_of(&format!("series/{cal_uid}/{uid}"))?
            .into_iter()
            .filter(|row| row.sync_note)
            .filter_map(|row| {
                let (lost, won) = read_conflict_note(&row.reason)?;
                Some(LostEdit {
                    at: row.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    lost_here: !here.is_empty() && lost == here,
                    won_here: !here.is_empty() && won == here,
                    lost: lost.to_owned(),
                    won: won.to_owned(),
                })
            })
            .collect();
        out.reverse();
        out.truncate(MAX_ENTRIES);
        Ok(out)
    }
}
