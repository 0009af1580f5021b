//! Which URLs a subscription takes. `webcal://` is not a protocol of its
//! own: it is the convention for "an HTTP calendar feed" that makes a
//! browser hand the link to a calendar app. Kairos fetches it as
//! `https://` (what Google, iCloud and Outlook serve), and stores it so.

use crate::error::FeedError;

/// The URL to fetch for `input`: `http://` and `https://` as given,
/// `webcal://` and `webcals://` as `https://`.
///
/// # Errors
/// Another scheme, no host, or not a URL at all.
pub fn feed_url(input: &str) -> Result<String, FeedError> {
    let bad = |why: &str| FeedError::Url {
        url: input.to_owned(),
        why: why.to_owned(),
    };
    let trimmed = input.trim();
    let (scheme, rest) = trimmed
        .split_once("://")
        .ok_or_else(|| bad("expected http://, https:// or webcal://"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => "http",
        "https" | "webcal" | "webcals" => "https",
        other => {
            return Err(bad(&format!(
                "scheme {other:?} is not supported (http, https, webcal)"
            )));
        }
    };
    let url = format!("{scheme}://{rest}");
    let parsed = reqwest::Url::parse(&url).map_err(|e| bad(&e.to_string()))?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    Ok(parsed.into())
}

#[cfg(test)]
mod tests {
    use super::feed_url;

    #[test]
    fn webcal_is_fetched_over_https() {
        assert_eq!(
            feed_url("webcal://example.com/a.ics").ok().as_deref(),
            Some("https://example.com/a.ics")
        );
        assert_eq!(
            feed_url("http://127.0.0.1:8080/x").ok().as_deref(),
            Some("http://127.0.0.1:8080/x")
        );
    }

    #[test]
    fn other_schemes_and_non_urls_are_refused_with_the_reason() {
        let e = feed_url("ftp://example.com/a.ics")
            .map(|_| ())
            .expect_err("refused");
        assert!(e.to_string().contains("\"ftp\" is not supported"), "{e}");
        let e = feed_url("example.com/a.ics")
            .map(|_| ())
            .expect_err("refused");
        assert!(e.to_string().contains("expected http://"), "{e}");
        assert!(feed_url("https://").is_err());
    }
}
