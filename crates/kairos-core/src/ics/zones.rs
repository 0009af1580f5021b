//! `TZID` → [`Zone`], resolved lazily: a `VTIMEZONE` is only read when some
//! property names it, so a block nobody references never fails a file (and
//! costs nothing). Each `TZID` is resolved once per file, so a problem with
//! it is reported once, at its first use.
//!
//! Order (see `tz`): the file's own `VTIMEZONE` first (an IANA name as
//! written, else the IANA zone its rules match, else its rules as written);
//! without a block, the name alone (IANA, then Windows and vendor names).
//! A `TZID` none of these resolve is an error in strict mode and floating
//! time, with a warning, in lenient mode.
//!
//! Names are compared unescaped: a `VTIMEZONE`'s `TZID` is TEXT, so Outlook's
//! `TZID:(UTC+10:00) Canberra\, Melbourne\, Sydney` names the zone that an
//! event's `TZID="(UTC+10:00) Canberra, Melbourne, Sydney"` uses; Outlook
//! also copies the escaped form into the parameter, which matches too.

use std::collections::HashMap;

use super::lexer::{Component, Property};
use super::warning::{At, Sink};
use crate::error::Error;
use crate::model::Zone;

/// A `TZID` as compared: trimmed, TEXT escapes (`\,` `\;` `\\`) undone.
pub(crate) fn name(tzid: &str) -> String {
    super::values::text(tzid.trim())
}

#[derive(Debug, Default)]
pub(crate) struct Zones<'a> {
    /// Every `VTIMEZONE` by its unescaped `TZID` (the last definition of a
    /// name wins).
    blocks: HashMap<String, &'a Component>,
    /// `TZID`s resolved so far.
    cache: HashMap<String, Zone>,
}

impl<'a> Zones<'a> {
    /// Collects the `VTIMEZONE` blocks among `components` (top-level ones
    /// included, for files without a `VCALENDAR`).
    pub(crate) fn new(components: impl Iterator<Item = &'a Component>) -> Self {
        let mut blocks = HashMap::new();
        for c in components.filter(|c| c.name == "VTIMEZONE") {
            if let Some(id) = c.prop("TZID") {
                blocks.insert(name(&id.value), c);
            }
        }
        Self {
            blocks,
            cache: HashMap::new(),
        }
    }

    /// The zone named by `p`'s `TZID` parameter, or `None` without one.
    pub(crate) fn of(
        &mut self,
        p: &Property,
        at: At<'_>,
        sink: &mut Sink,
    ) -> Result<Option<Zone>, Error> {
        // One value only; several mean an unquoted name with commas
        // (`TZID=(UTC+10:00) Canberra\, Melbourne\, Sydney`): rejoined.
        let Some(values) = p.params.iter().find(|x| x.name == "TZID") else {
            return Ok(None);
        };
        let id = name(&values.values.join(","));
        if let Some(z) = self.cache.get(&id) {
            return Ok(Some(*z));
        }
        let zone = self.resolve(&id, p, at, sink)?;
        self.cache.insert(id, zone);
        Ok(Some(zone))
    }

    fn resolve(&self, id: &str, p: &Property, at: At<'_>, sink: &mut Sink) -> Result<Zone, Error> {
        let Some(block) = self.blocks.get(id) else {
            if let Some(tz) = crate::tz::by_name(id) {
                return Ok(Zone::Tz(tz));
            }
            let e = Error::property(
                p.line,
                &p.name,
                format!(
                    "unknown time zone TZID={id:?}: not an IANA name, and no VTIMEZONE defines it"
                ),
            );
            sink.repair(e, at, "read as floating time")?;
            return Ok(Zone::Floating);
        };
        let block_at = At::new("VTIMEZONE", None);
        match crate::tz::resolve_block(block, sink) {
            Ok(zone) => Ok(zone),
            Err(e) => {
                // A block we cannot read: its name may still be known.
                let action = match crate::tz::by_name(id) {
                    Some(tz) => format!("its name read as {}", tz.name()),
                    None => "times in it read as floating time".to_owned(),
                };
                sink.repair(e, block_at, &action)?;
                Ok(crate::tz::by_name(id).map_or(Zone::Floating, Zone::Tz))
            }
        }
    }
}
