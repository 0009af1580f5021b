//! CalDAV failures as stable error kinds: from the error itself (a
//! request the person just made) or from its stored message (the
//! background sync keeps only the text, `kairos_caldav::status`).

use kairos_caldav::CaldavError;

use crate::api::{ApiError, ErrorKind};

/// The kind of a connection failure, from its reason.
fn network_kind(reason: &str) -> ErrorKind {
    let r = reason.to_lowercase();
    if r.contains("timed out") || r.contains("no answer within") {
        ErrorKind::CaldavTimeout
    } else if r.contains("certificate") || r.contains("tls") {
        ErrorKind::CaldavTls
    } else {
        ErrorKind::CaldavUnreachable
    }
}

/// The kind of a stored failure message (the words `CaldavError` writes).
#[must_use]
pub fn kind_of_message(m: &str) -> ErrorKind {
    if m.contains("refused user") {
        ErrorKind::CaldavUnauthorized
    } else if m.contains("sent a TLS certificate Kairos does not trust") || m.starts_with("--ca: ")
    {
        ErrorKind::CaldavTls
    } else if m.contains("is not a CalDAV server") {
        ErrorKind::CaldavNotCaldav
    } else if m.starts_with("cannot reach ") {
        network_kind(m)
    } else if m.starts_with("bad URL ") {
        ErrorKind::CaldavBadUrl
    } else if m.starts_with("secret store:") {
        ErrorKind::CaldavSecret
    } else if m.contains(" failed: ") {
        ErrorKind::CaldavServer
    } else {
        ErrorKind::Internal
    }
}

impl From<CaldavError> for ApiError {
    fn from(e: CaldavError) -> Self {
        let kind = match &e {
            CaldavError::Unauthorized { .. } => ErrorKind::CaldavUnauthorized,
            CaldavError::NotCaldav { .. } => ErrorKind::CaldavNotCaldav,
            CaldavError::Network { reason, .. } => network_kind(reason),
            CaldavError::Certificate { .. } | CaldavError::BadCa(_) => ErrorKind::CaldavTls,
            CaldavError::Protocol { .. } => ErrorKind::CaldavServer,
            CaldavError::BadUrl { .. } => ErrorKind::CaldavBadUrl,
            CaldavError::Secret(_) => ErrorKind::CaldavSecret,
            CaldavError::NotFound(_) => ErrorKind::NotFound,
            CaldavError::BadInterval(_) => ErrorKind::Invalid,
            CaldavError::Store(_) => ErrorKind::Store,
            CaldavError::Engine(_) | CaldavError::Action(_) => ErrorKind::Internal,
        };
        Self {
            kind,
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_messages_keep_their_kind() {
        let net = |reason: &str| CaldavError::Network {
            url: "https://dav.example".into(),
            reason: reason.into(),
        };
        let cases = [
            (
                CaldavError::Unauthorized {
                    url: "https://dav.example".into(),
                    user: "a".into(),
                    status: 401,
                },
                ErrorKind::CaldavUnauthorized,
            ),
            (
                CaldavError::NotCaldav {
                    url: "https://dav.example".into(),
                    why: "x".into(),
                },
                ErrorKind::CaldavNotCaldav,
            ),
            (net("connection refused"), ErrorKind::CaldavUnreachable),
            (
                net("invalid peer certificate: UnknownIssuer"),
                ErrorKind::CaldavTls,
            ),
            (
                CaldavError::Certificate {
                    url: "https://dav.example".into(),
                    problem: "it is signed by an authority this computer does not know".into(),
                },
                ErrorKind::CaldavTls,
            ),
            (
                CaldavError::BadCa("CA certificate: no block in it".into()),
                ErrorKind::CaldavTls,
            ),
            (
                net("PROPFIND calendars timed out after 60 s"),
                ErrorKind::CaldavTimeout,
            ),
            (
                CaldavError::BadUrl {
                    url: "x".into(),
                    reason: "y".into(),
                },
                ErrorKind::CaldavBadUrl,
            ),
            (
                CaldavError::Secret("locked".into()),
                ErrorKind::CaldavSecret,
            ),
            (
                CaldavError::Protocol {
                    what: "REPORT sync-collection",
                    url: "u".into(),
                    reason: "the server answered 500".into(),
                },
                ErrorKind::CaldavServer,
            ),
        ];
        for (e, want) in cases {
            let msg = e.to_string();
            assert_eq!(ApiError::from(e).kind, want, "{msg}");
            assert_eq!(kind_of_message(&msg), want, "{msg}");
        }
    }
}
