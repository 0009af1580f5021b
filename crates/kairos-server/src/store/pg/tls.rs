//! How a `--database` URL reaches PostgreSQL: in the clear, as before,
//! unless it asks for TLS (`sslmode=require`, `verify-ca` or
//! `verify-full`, as a managed PostgreSQL gives them); then always over
//! TLS with the server's certificate checked against the web's roots and
//! the CA of `sslrootcert=FILE` (kairos-tls: the trust of `kairos sync
//! join --ca`), its host name included — `require` is checked as
//! `verify-full` is, since a connection whose certificate nobody checks
//! hands the password to whoever answers. `disable`, `allow` and `prefer`
//! connect in the clear (a local cluster, a Unix socket). libpq's
//! `sslrootcert`, `verify-*` and `PGPASSWORD` are read here;
//! tokio-postgres knows none of them.

use std::str::FromStr;

use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store::StoreError;

/// A parsed `--database`: its connection settings and TLS connector.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: MakeRustlsConnect,
}

/// Parses `url` (a `postgres://` URL or libpq's `key=value` form).
///
/// # Errors
/// The URL (named), an `sslmode` PostgreSQL does not know, an
/// `sslrootcert` file that cannot be read or holds no certificate.
pub(crate) fn parse(url: &str) -> Result<Target, StoreError> {
    let bad = |why: String| StoreError::Url(format!("{}: {why}", redacted(url)));
    let (text, mode, root) = take_tls_params(url).map_err(bad)?;
    let mut config = tokio_postgres::Config::from_str(&text).map_err(|e| bad(e.to_string()))?;
    // libpq's PGPASSWORD, so that the password need not be in the URL,
    // where every `ps` shows it (a systemd `EnvironmentFile=` sets it).
    if config.get_password().is_none()
        && let Some(password) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty())
    {
        config.password(password.into_encoded_bytes());
    }
    let tls = matches!(
        mode.as_deref(),
        Some("require" | "verify-ca" | "verify-full")
    );
    config.ssl_mode(if tls {
        SslMode::Require
    } else {
        SslMode::Disable
    });
    let ca = match root {
        Some(path) => Some(
            std::fs::read_to_string(&path).map_err(|e| bad(format!("sslrootcert {path}: {e}")))?,
        ),
        None => None,
    };
    let client =
        kairos_tls::client_config(ca.as_deref()).map_err(|e| bad(format!("sslrootcert: {e}")))?;
    Ok(Target {
        config,
        tls: MakeRustlsConnect::new(client),
    })
}

/// `url` without its password, for messages.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let auth = &url[s + 3..at];
            match auth.split_once(':') {
                Some((user, _)) => format!("{}{user}:…{}", &url[..s + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// `url` without `sslmode` and `sslrootcert`, and their values
/// (`sslrootcert` percent-decoded). Both forms: `?a=b&c=d` and `a=b c=d`.
fn take_tls_params(url: &str) -> Result<(String, Option<String>, Option<String>), String> {
    let (mut mode, mut root) = (None, None);
    let mut take = |key: &str, value: &str| -> Result<bool, String> {
        match key {
            "sslmode" => match value {
                "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full" => {
                    mode = Some(value.to_owned());
                    Ok(true)
                }
                other => Err(format!(
                    "sslmode {other:?} is not disable, allow, prefer, require, verify-ca or verify-full"
                )),
            },
            "sslrootcert" => {
                root = Some(percent_decoded(value)?);
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(k, v)? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for pair in url.split_whitespace() {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(k, v)? {
                kept.push(pair);
            }
        }
        kept.join(" ")
    };
    Ok((rest, mode, root))
}

fn percent_decoded(s: &str) -> Result<String, String> {
    let (mut out, b) = (Vec::with_capacity(s.len()), s.as_bytes());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or("a cut %-escape")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("%{hex} is not an escape"))?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 once decoded".to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn tls_parameters_are_taken_out_of_either_form() {
        let (rest, mode, root) = take_tls_params(
            "postgres://k@db.example/kairos?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(rest, "postgres://k@db.example/kairos?application_name=x");
        assert_eq!(mode.as_deref(), Some("verify-full"));
        assert_eq!(root.as_deref(), Some("/etc/ca.pem"));
        let (rest, mode, root) =
            take_tls_params("host=db user=k sslmode=require dbname=kairos").unwrap();
        assert_eq!(rest, "host=db user=k dbname=kairos");
        assert_eq!((mode.as_deref(), root), (Some("require"), None));
        assert!(take_tls_params("postgres://db/k?sslmode=sometimes").is_err());
    }

    #[test]
    fn require_means_tls_and_the_rest_the_clear() {
        let t = parse("postgres://k@db.example/kairos?sslmode=require").unwrap();
        assert_eq!(t.config.get_ssl_mode(), SslMode::Require);
        let t = parse("postgres://k@db.example/kairos?sslmode=prefer").unwrap();
        assert_eq!(t.config.get_ssl_mode(), SslMode::Disable);
        let t = parse("postgres://k@db.example/kairos").unwrap();
        assert_eq!(t.config.get_ssl_mode(), SslMode::Disable);
        let e = parse("postgres://k:hunter2@db/kairos?sslrootcert=/nonexistent")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("sslrootcert /nonexistent") && !e.contains("hunter2"),
            "{e}"
        );
    }
}
