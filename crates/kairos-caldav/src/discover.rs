//! Finding a person's calendars from a server URL (or e-mail domain), a
//! user and a password: RFC 4791 §5.1 (`OPTIONS` advertising
//! `calendar-access`), RFC 6764 (`/.well-known/caldav`, then DNS `SRV`/`TXT`
//! for a domain name), RFC 5397 `current-user-principal`, RFC 4791
//! `calendar-home-set`, and the calendar collections with their names,
//! colours and components. Every step is libdav's; this module only
//! orders them and says clearly which one failed.

use http::Uri;
use libdav::CheckSupportError;
use libdav::caldav::{FindCalendarHomeSet, FindCalendars, GetSupportedComponents};
use libdav::names;
use libdav::sd::{ContextUrl, DiscoverableService, find_context_url};

use crate::dav::{Dav, DavFailure, parse_url};
use crate::error::{CaldavError, Result};

/// One calendar collection found in the home set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCalendar {
    /// Its path on the server.
    pub href: String,
    /// `displayname`, else the last path segment.
    pub name: String,
    /// `calendar-color`, if any.
    pub color: Option<String>,
    /// Supported components (`VEVENT`, `VTODO`, …); all when the server
    /// does not say.
    pub components: Vec<String>,
}

/// What discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// The principal's absolute URL.
    pub principal: String,
    /// The calendar home's absolute URL.
    pub home: String,
    /// The calendars there.
    pub calendars: Vec<RemoteCalendar>,
}

/// `scheme://authority` + `path` of `base`.
pub(crate) fn absolute(base: &Uri, path: &str) -> String {
    if path.contains("://") {
        return path.to_owned();
    }
    let scheme = base.scheme_str().unwrap_or("https");
    let authority = base.authority().map_or("", http::uri::Authority::as_str);
    format!("{scheme}://{authority}{path}")
}

/// Finds the calendars of `user` at `url`, trusting `ca_pem` (PEM) in
/// addition to the web's roots when given.
///
/// # Errors
/// [`CaldavError::Unauthorized`] (401/403), [`CaldavError::NotCaldav`]
/// (nothing there speaks CalDAV), [`CaldavError::Network`],
/// [`CaldavError::Certificate`], [`CaldavError::BadCa`],
/// [`CaldavError::BadUrl`].
pub fn discover(
    url: &str,
    user: &str,
    password: &str,
    ca_pem: Option<&str>,
) -> Result<(Dav, Discovered)> {
    let given = parse_url(url)?;
    let mut dav = Dav::new(given.clone(), user, password, ca_pem)?;
    if let Some(ctx) = context_url(&dav, &given, url)? {
        dav.client.webdav_client.base_url = ctx;
    }
    let base = dav.base().clone();
    let base_s = base.to_string();
    let principal = dav
        .run(
            "PROPFIND current-user-principal",
            &base_s,
            dav.client.find_current_user_principal(),
        )?
        .map_or_else(|| base.path().to_owned(), |u| u.path().to_owned());
    let principal_url = absolute(&base, &principal);
    let homes = dav
        .run(
            "PROPFIND calendar-home-set",
            &principal_url,
            dav.client.request(FindCalendarHomeSet::new(&principal)),
        )
        .map_err(|e| not_caldav_unless_auth(e, url, "the principal has no calendar-home-set"))?;
    let Some(home) = homes.home_sets.first().map(|u| u.path().to_owned()) else {
        return Err(CaldavError::NotCaldav {
            url: url.to_owned(),
            why: format!("{principal_url} names no calendar-home-set"),
        });
    };
    let home_url = absolute(&base, &home);
    let found = dav.run(
        "PROPFIND calendars",
        &home_url,
        dav.client.request(FindCalendars::new(&home)),
    )?;
    let mut calendars = Vec::new();
    for c in found.calendars {
        let prop = |n: &libdav::PropertyName<'_, '_>| {
            c.properties
                .iter()
                .find(|(p, _)| *p == n)
                .and_then(|(_, v)| v.clone())
                .filter(|v| !v.trim().is_empty())
        };
        let name = prop(&names::DISPLAY_NAME).unwrap_or_else(|| {
            c.href
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("calendar")
                .to_owned()
        });
        let color = prop(&names::CALENDAR_COLOUR);
        let comps = dav
            .run(
                "PROPFIND supported-calendar-component-set",
                &absolute(&base, &c.href),
                dav.client.request(GetSupportedComponents::new(&c.href)),
            )
            .map(|r| {
                r.components
                    .iter()
                    .map(|c| c.as_str().to_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let components = if comps.is_empty() {
            vec!["VEVENT".to_owned(), "VTODO".to_owned()]
        } else {
            comps
        };
        calendars.push(RemoteCalendar {
            href: c.href,
            name,
            color,
            components,
        });
    }
    Ok((
        dav,
        Discovered {
            principal: principal_url,
            home: home_url,
            calendars,
        },
    ))
}

fn not_caldav_unless_auth(e: CaldavError, url: &str, why: &str) -> CaldavError {
    match e {
        CaldavError::Protocol {
            reason, url: at, ..
        } => CaldavError::NotCaldav {
            url: url.to_owned(),
            why: format!("{why} ({at}: {reason})"),
        },
        other => other,
    }
}

/// The context URL: the given one when it advertises `calendar-access`,
/// else where `/.well-known/caldav` redirects, else (for a domain name)
/// what DNS `SRV`/`TXT` records say. `None`: keep the given URL.
fn context_url(dav: &Dav, given: &Uri, text: &str) -> Result<Option<Uri>> {
    let url = given.to_string();
    let check = dav.run_raw(dav.client.request(libdav::dav::CheckSupport::caldav(given)));
    let first = match check {
        Ok(Ok(())) => return Ok(None),
        Ok(Err(CheckSupportError::BadStatusCode(s))) if s == 401 || s == 403 => {
            return Err(dav.explain("OPTIONS", &url, DavFailure::Status(s)));
        }
        Ok(Err(CheckSupportError::Request(r))) => {
            return Err(dav.explain("OPTIONS", &url, r.into()));
        }
        Ok(Err(e)) => format!("OPTIONS {url}: {e}"),
        Err(timeout) => return Err(timeout),
    };
    let service = if given.scheme_str() == Some("http") {
        DiscoverableService::CalDav
    } else {
        DiscoverableService::CalDavs
    };
    let host = given.host().unwrap_or_default();
    let port = given.port_u16().unwrap_or(service.default_port());
    let well_known = format!("{}://{host}:{port}/.well-known/caldav", service.scheme());
    match dav.run(
        "GET /.well-known/caldav",
        &well_known,
        dav.client.find_context_path(service, host, port),
    ) {
        Ok(Some(u)) => return Ok(Some(u)),
        Ok(None) => {}
        Err(e @ (CaldavError::Unauthorized { .. } | CaldavError::Network { .. })) => {
            return Err(e);
        }
        Err(e) => {
            return Err(CaldavError::NotCaldav {
                url: text.to_owned(),
                why: format!("{first}; {e}"),
            });
        }
    }
    let is_name =
        host.parse::<std::net::IpAddr>().is_err() && !host.starts_with('[') && host != "localhost";
    if is_name
        && let Ok(Ok(ContextUrl::Found(u))) = dav.run_raw(find_context_url(&dav.client, service))
    {
        return Ok(Some(u));
    }
    Err(CaldavError::NotCaldav {
        url: text.to_owned(),
        why: format!(
            "{first}, and {well_known} does not redirect to a CalDAV service{}",
            if is_name {
                " (nor do DNS SRV records)"
            } else {
                ""
            }
        ),
    })
}
