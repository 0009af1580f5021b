//! The sentence a webhook body carries for chat services, so that a
//! fallback can be an incoming webhook of the person's chat as it is:
//! `text` (Slack, Mattermost, Rocket.Chat, Zulip's Slack-compatible
//! webhook) and `content` (Discord), beside Kairos's own fields, which
//! those services ignore. A title cannot ping a channel: `text` escapes
//! `&`, `<` and `>` as Slack asks (`<!channel>` stays text), and
//! `allowed_mentions` tells Discord to notify nobody (`@everyone` stays
//! text). Services that refuse unknown fields (Google Chat, Microsoft
//! Teams' workflows) need a relay between.

use std::borrow::Cow;

use super::claim::Claimed;

/// The most characters of the sentence (Discord takes 2,000 in `content`).
pub const MAX_CHARS: usize = 1000;

/// The payload's fields the sentence names (borrowed from it unless
/// escaped).
#[derive(serde::Deserialize, Default)]
struct Said<'a> {
    #[serde(borrow)]
    summary: Option<Cow<'a, str>>,
    #[serde(borrow)]
    occurrence_start: Option<Cow<'a, str>>,
    #[serde(borrow)]
    location: Option<Cow<'a, str>>,
}

/// "Reminder: TITLE, START, at WHERE. No device acknowledged it." (or
/// that it was snoozed until T and its return was not), at most
/// [`MAX_CHARS`] characters.
#[must_use]
pub fn sentence(c: &Claimed) -> String {
    let said: Said<'_> = serde_json::from_str(&c.payload).unwrap_or_default();
    let mut s = String::with_capacity(160);
    s.push_str("Reminder: ");
    s.push_str(said.summary.as_deref().unwrap_or("(no title)"));
    if let Some(start) = said.occurrence_start.filter(|t| !t.is_empty()) {
        s.push_str(", ");
        s.push_str(&start);
    }
    if let Some(place) = said.location.filter(|l| !l.is_empty()) {
        s.push_str(", at ");
        s.push_str(&place);
    }
    match c.after_snooze() {
        Some(t) => {
            s.push_str(". Snoozed on a device until ");
            s.push_str(&t);
            s.push_str("; no device acknowledged its return.");
        }
        None => s.push_str(". No device acknowledged it."),
    }
    match s.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => {
            s.truncate(cut);
            s
        }
        None => s,
    }
}

/// `s` with `&`, `<`, `>` escaped as Slack's message text wants them.
#[must_use]
pub fn slack_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(payload: &str, round: i64) -> Claimed {
        Claimed {
            account: "alice".into(),
            key: "k".into(),
            channel: "webhook".into(),
            attempts: 0,
            always: false,
            due_ms: 0,
            target: String::new(),
            secret: None,
            payload: payload.into(),
            state: "pending".into(),
            calendar: "c1".into(),
            deliver_ms: 0,
            next_ms: 0,
            rank: 10,
            round,
        }
    }

    #[test]
    fn the_sentence_names_the_reminder_and_why_it_came_here() {
        let p = r#"{"uid":"u","occurrence_start":"2026-12-06T10:00:00+01:00","summary":"Pill","location":"Home","calendar":"Me"}"#;
        assert_eq!(
            sentence(&claimed(p, 0)),
            "Reminder: Pill, 2026-12-06T10:00:00+01:00, at Home. No device acknowledged it."
        );
        assert_eq!(
            sentence(&claimed(p, 1_796_551_200_000)),
            "Reminder: Pill, 2026-12-06T10:00:00+01:00, at Home. Snoozed on a device until \
             2026-12-06T10:00:00Z; no device acknowledged its return."
        );
        assert_eq!(
            sentence(&claimed("not json", 0)),
            "Reminder: (no title). No device acknowledged it."
        );
        let long = format!(r#"{{"summary":"{}"}}"#, "é".repeat(3000));
        assert_eq!(sentence(&claimed(&long, 0)).chars().count(), MAX_CHARS);
    }

    #[test]
    fn a_title_cannot_ping_a_slack_channel() {
        assert_eq!(
            slack_escaped("<!channel> & <@U123>"),
            "&lt;!channel&gt; &amp; &lt;@U123&gt;"
        );
    }
}
