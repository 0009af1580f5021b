//! Sync failures as the UI shows them: each [`SyncError`] becomes one stable
//! [`ErrorKind`] (`sync_unreachable`, `sync_code_expired`, …) that the UI
//! turns into plain words in the person's language with what to do, and a
//! message in English that keeps the detail (the server's own words).

use kairos_sync::SyncError;

use crate::api::{ApiError, ErrorKind};

/// What was being done when it failed: a refusal (HTTP 401) means a bad
/// pairing code while joining, a revoked or unknown device afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// `/v1/join` with a pairing code.
    Join,
    /// A session with this device's token.
    Session,
}

fn err(kind: ErrorKind, message: impl Into<String>) -> ApiError {
    ApiError {
        kind,
        message: message.into(),
    }
}

/// The kind and message of a sync failure.
pub(crate) fn api_error(e: SyncError, step: Step) -> ApiError {
    let text = e.to_string();
    match e {
        SyncError::NotPaired => err(ErrorKind::SyncNotPaired, text),
        SyncError::BadUrl(_) => err(ErrorKind::SyncBadUrl, text),
        SyncError::Timeout(_) => err(ErrorKind::SyncTimeout, text),
        SyncError::Refused {
            status, message, ..
        } => refused(status, &message, step, text),
        SyncError::Connection { message, .. } => err(connection_kind(&message), text),
        SyncError::Closed { code, .. } => err(
            match code {
                4409 => ErrorKind::SyncVersion,
                4401 => ErrorKind::SyncRevoked,
                _ => ErrorKind::SyncServer,
            },
            text,
        ),
        SyncError::Protocol(m) => err(
            if m.contains("version") {
                ErrorKind::SyncVersion
            } else {
                ErrorKind::SyncNotKairos
            },
            text,
        ),
        SyncError::Server { .. } => err(ErrorKind::SyncServer, text),
        SyncError::Store(s) => s.into(),
        SyncError::Engine(e) => e.into(),
    }
}

fn refused(status: u16, message: &str, step: Step, text: String) -> ApiError {
    let kind = match (status, step) {
        (401, Step::Join) if message.contains("expired") => ErrorKind::SyncCodeExpired,
        (401, Step::Join) if message.contains("already used") => ErrorKind::SyncCodeUsed,
        (401, Step::Join) => ErrorKind::SyncCodeWrong,
        (401, Step::Session) => ErrorKind::SyncRevoked,
        // A bad device name (the server names what is wrong).
        (400, _) if !message.contains("not a Kairos") => ErrorKind::Invalid,
        // A Kairos server that does not serve this version's paths.
        (404, _) if message.starts_with("no such path") => ErrorKind::SyncVersion,
        (503 | 429, _) if !message.contains("not a Kairos") => ErrorKind::SyncServer,
        // Anything else answered in HTTP, not the way a Kairos server
        // does (a web page, a proxy).
        _ => ErrorKind::SyncNotKairos,
    };
    err(kind, text)
}

/// A connection that failed or broke: the certificate, something that is
/// not a WebSocket server, or nothing reachable.
fn connection_kind(message: &str) -> ErrorKind {
    let m = message.to_ascii_lowercase();
    if m.contains("certificate") || m.contains("tls") {
        ErrorKind::SyncTls
    } else if m.contains("http")
        || m.contains("handshake")
        || m.contains("protocol")
        || m.contains("header")
    {
        ErrorKind::SyncNotKairos
    } else {
        ErrorKind::SyncUnreachable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(e: SyncError, step: Step) -> ErrorKind {
        api_error(e, step).kind
    }

    fn refusal(status: u16, message: &str) -> SyncError {
        SyncError::Refused {
            url: "ws://x".into(),
            status,
            message: message.into(),
        }
    }

    #[test]
    fn each_refusal_has_its_own_kind() {
        use ErrorKind as K;
        for (status, message, step, want) in [
            (401, "unknown pairing code", Step::Join, K::SyncCodeWrong),
            (
                401,
                "pairing code already used",
                Step::Join,
                K::SyncCodeUsed,
            ),
            (401, "pairing code expired", Step::Join, K::SyncCodeExpired),
            (401, "device revoked", Step::Session, K::SyncRevoked),
            (401, "unknown token", Step::Session, K::SyncRevoked),
            (
                404,
                "no such path /v1/join; use /v2/sync",
                Step::Join,
                K::SyncVersion,
            ),
            (
                200,
                "200 OK (not a Kairos sync server's answer: check the URL and port)",
                Step::Join,
                K::SyncNotKairos,
            ),
            (404, "404 Not Found", Step::Session, K::SyncNotKairos),
            (
                503,
                "server error, try again later",
                Step::Session,
                K::SyncServer,
            ),
        ] {
            assert_eq!(kind(refusal(status, message), step), want, "{message}");
        }
    }

    #[test]
    fn connection_failures_say_whether_it_was_the_certificate() {
        let conn = |m: &str| SyncError::Connection {
            url: "wss://x".into(),
            message: m.into(),
        };
        let tls = conn("TLS error: invalid peer certificate: UnknownIssuer");
        assert_eq!(kind(tls, Step::Join), ErrorKind::SyncTls);
        let refused = conn("IO error: Connection refused (os error 111)");
        assert_eq!(kind(refused, Step::Join), ErrorKind::SyncUnreachable);
        let closed = SyncError::Closed {
            code: 4409,
            reason: "version 2 not supported".into(),
        };
        assert_eq!(kind(closed, Step::Session), ErrorKind::SyncVersion);
        assert_eq!(
            kind(SyncError::Timeout(10), Step::Join),
            ErrorKind::SyncTimeout
        );
    }
}
