//! Is a fetched body a calendar? Read it leniently (as `kairos import`
//! does) and refuse what would wipe the calendar by mistake: an empty body,
//! an HTML page, garbage, or a calendar nothing of which could be read.

use kairos_core::Limits;
use kairos_core::ics::{self, Warning};
use kairos_core::model::Calendar;

use crate::error::FeedError;

/// The calendar in `bytes`, with the warnings of lenient reading.
///
/// A readable `VCALENDAR` with no events at all is accepted (the feed was
/// emptied on purpose); one whose every event was unreadable is not.
///
/// # Errors
/// [`FeedError::Empty`], [`FeedError::Html`], [`FeedError::NotCalendar`].
pub fn read(
    bytes: &[u8],
    content_type: Option<&str>,
) -> Result<(Calendar, Vec<Warning>), FeedError> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&bytes[bytes.len()..], |i| &bytes[i..]);
    let start = start.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(start);
    if start.is_empty() {
        return Err(FeedError::Empty);
    }
    let html_type = content_type.is_some_and(|t| t.to_ascii_lowercase().contains("html"));
    if start.first() == Some(&b'<') || (html_type && !start.starts_with(b"BEGIN:")) {
        return Err(FeedError::Html {
            content_type: content_type.map(str::to_owned),
        });
    }
    let (cal, warnings) = ics::parse_calendar_lenient(bytes, &Limits::default())
        .map_err(|e| FeedError::NotCalendar(e.to_string()))?;
    if cal.events.is_empty() && !warnings.is_empty() {
        return Err(FeedError::NotCalendar(format!(
            "nothing could be read ({} warnings; the first: {})",
            warnings.len(),
            warnings[0]
        )));
    }
    Ok((cal, warnings))
}
