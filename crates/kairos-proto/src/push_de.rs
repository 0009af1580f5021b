//! Decoding a device's frame for the server, keeping each pushed op's JSON
//! text as it came: the server stores that text instead of encoding every
//! op again (serde's encoder was a quarter of the server's session CPU in
//! a push-heavy run: docs/benchmarks.md, "Ingest, third pass").
//!
//! The text kept is one JSON object that decoded as an [`Op`] with no field
//! an `Op` does not have, at its top level (checked by [`StrictOp`]) nor in
//! its body (checked by [`KnownKeys`]: `Body`'s decoder ignores unknown
//! fields); an op with an unknown field decodes all the same (a newer
//! client may send one) and its JSON is this crate's encoding of the
//! decoded op, so no stored text carries a field that a later `Op` might
//! read differently.
//!
//! The text kept is also no longer than this crate's encoding of the op but
//! for a few bytes: it has no whitespace outside strings, no escape our
//! encoder would not write (`\u0061` for `a`, `\/`) and no key twice
//! ([`compact`], [`KnownKeys`]); any other text is encoded again. So a
//! device cannot make the server store more than the op needs by padding
//! it (the field order, `"base":null` and the like stay the device's).

use std::fmt;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::error::ProtoError;
use crate::hlc::Hlc;
use crate::op::Op;
use crate::wire::{ClientMsg, decode_client, validate_ops};
use crate::{MAX_FRAME, PROTOCOL_VERSION};

/// A pushed op and its JSON text (the device's, or ours: see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedOp {
    /// The op, decoded and validated.
    pub op: Op,
    /// One JSON object that decodes as `op`.
    pub json: String,
}

/// A device's frame: a push with each op's text, or any other message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientFrame {
    /// `push`: at most [`crate::MAX_OPS_PER_MESSAGE`] ops of one device,
    /// ids unique, each validated as [`decode_client`] validates them.
    Push(Vec<PushedOp>),
    /// Any other message, as [`decode_client`] returns it.
    Other(ClientMsg),
}

/// A frame's version, type and ops, each op left as its text: a push in
/// one pass over the frame.
#[derive(Deserialize)]
struct RawFrame<'a> {
    v: Option<serde_json::Value>,
    t: Option<serde_json::Value>,
    #[serde(borrow)]
    ops: Option<Vec<&'a RawValue>>,
}

/// An [`Op`] with nothing else at its top level: decodes exactly when the
/// text has the op's shape and no other top-level field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StrictOp<'a> {
    id: String,
    hlc: Hlc,
    device: String,
    #[serde(default)]
    base: Option<Hlc>,
    #[serde(borrow)]
    body: &'a RawValue,
}

impl StrictOp<'_> {
    /// The op, when its body has only its kind's fields.
    fn op(self) -> Option<Op> {
        let text = self.body.get();
        let KnownKeys(true) = serde_json::from_str(text).ok()? else {
            return None;
        };
        Some(Op {
            id: self.id,
            hlc: self.hlc,
            device: self.device,
            base: self.base,
            body: serde_json::from_str(text).ok()?,
        })
    }
}

/// The fields of a body of kind `k` (`k` itself aside), as `Body` has
/// them. An unknown kind has none (its op is refused anyway); a field
/// missing here only costs the op's text being encoded again.
fn fields(k: &str) -> &'static [&'static str] {
    match k {
        "calendar.put" => &["calendar", "name", "color"],
        "calendar.delete" => &["calendar"],
        "series.put" => &["calendar", "uid", "ics"],
        "series.delete" => &["calendar", "uid", "caldav"],
        "calendar.work" => &["calendar", "week", "holidays"],
        "calendar.feed" => &["calendar", "url", "every", "removed"],
        "reminder.dismiss" => &["key"],
        "reminder.snooze" => &["key", "until"],
        "account.zone" => &["zone"],
        _ => &[],
    }
}

/// Whether a body object has no key but `k` and its kind's [`fields`]
/// (a key with an escape in it counts as unknown).
struct KnownKeys(bool);

impl<'de> Deserialize<'de> for KnownKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KnownKeys;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an op's body")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<KnownKeys, A::Error> {
                let (mut kind, mut keys) = (None, Vec::with_capacity(4));
                let mut twice = false;
                while let Some(key) = m.next_key::<&'de str>()? {
                    twice |= key == "k" && kind.is_some() || keys.contains(&key);
                    if key == "k" {
                        kind = Some(m.next_value::<&'de str>()?);
                    } else {
                        m.next_value::<IgnoredAny>()?;
                        keys.push(key);
                    }
                }
                let known = kind.map(fields).unwrap_or_default();
                Ok(KnownKeys(
                    !twice && kind.is_some() && keys.iter().all(|k| known.contains(k)),
                ))
            }
        }
        d.deserialize_map(V)
    }
}

/// Whether a JSON text has nothing our encoder (serde_json's compact
/// writer) would not write: no whitespace outside strings, and inside
/// strings only the short escapes (`\"`, `\\`, `\n`, …). It writes
/// `\u00XX` for control characters too, but ops refuse those; any other
/// `\u` escape is a character written longer than it needs.
fn compact(text: &str) -> bool {
    // Most ops have neither whitespace nor escapes: one quick pass.
    if !text
        .bytes()
        .any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\\'))
    {
        return true;
    }
    let mut bytes = text.bytes();
    let mut in_string = false;
    while let Some(b) = bytes.next() {
        match (in_string, b) {
            (false, b' ' | b'\t' | b'\n' | b'\r') => return false,
            (_, b'"') => in_string = !in_string,
            (true, b'\\') => match bytes.next() {
                Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                _ => return false,
            },
            _ => {}
        }
    }
    true
}

impl PushedOp {
    /// The op in `raw`, with `raw` as its text when it has the op's shape
    /// and nothing more, written compactly; otherwise (an unknown or
    /// repeated field, padding) the op encoded again. The error is the one
    /// decoding it as an [`Op`] gives.
    fn decode(raw: &RawValue) -> Result<Self, ProtoError> {
        let text = raw.get();
        if let Some(op) = Some(text)
            .filter(|t| compact(t))
            .and_then(|t| serde_json::from_str::<StrictOp<'_>>(t).ok())
            .and_then(StrictOp::op)
        {
            return Ok(Self {
                op,
                json: text.to_owned(),
            });
        }
        let op: Op =
            serde_json::from_str(text).map_err(|e| ProtoError::Malformed(e.to_string()))?;
        let json = serde_json::to_string(&op).map_err(|e| ProtoError::Malformed(e.to_string()))?;
        Ok(Self { op, json })
    }
}

/// [`decode_client`] for the server: the same checks and the same errors
/// (a push's op that does not decode is named by serde's message about the
/// op's own text), with each pushed op's JSON kept. A push of this version
/// is read in one pass (its ops then each from their own text); any other
/// frame, or one that does not read so, goes through [`decode_client`].
///
/// # Errors
/// [`ProtoError`], with the close code to use.
pub fn decode_client_frame(text: &str) -> Result<ClientFrame, ProtoError> {
    if text.len() <= MAX_FRAME
        && text.trim_start().starts_with('{')
        && let Ok(RawFrame {
            v: Some(v),
            t: Some(serde_json::Value::String(t)),
            ops: Some(raws),
        }) = serde_json::from_str::<RawFrame<'_>>(text)
        && v.as_u64() == Some(PROTOCOL_VERSION)
        && t == "push"
    {
        let ops = raws
            .into_iter()
            .map(PushedOp::decode)
            .collect::<Result<Vec<_>, _>>()?;
        validate_ops("push", ops.iter().map(|p| &p.op)).map_err(ProtoError::Invalid)?;
        return Ok(ClientFrame::Push(ops));
    }
    Ok(match decode_client(text)? {
        // Not read above (none is known): encoded again, as the module says.
        ClientMsg::Push { ops } => ClientFrame::Push(
            ops.into_iter()
                .map(|op| {
                    let json = serde_json::to_string(&op)
                        .map_err(|e| ProtoError::Malformed(e.to_string()))?;
                    Ok(PushedOp { op, json })
                })
                .collect::<Result<_, ProtoError>>()?,
        ),
        msg => ClientFrame::Other(msg),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::{ClientFrame, decode_client_frame};
    use crate::{ClientMsg, Op, decode_client};

    fn pushed(frame: &str) -> Vec<super::PushedOp> {
        match decode_client_frame(frame).unwrap() {
            ClientFrame::Push(ops) => ops,
            ClientFrame::Other(m) => panic!("not a push: {m:?}"),
        }
    }

    const OP: &str = r#"{"id":"d_aaaa000000000001:5","hlc":"0001764864000123.00000.d_aaaa000000000001","device":"d_aaaa000000000001","body":{"k":"reminder.dismiss","key":"r"}}"#;

    #[test]
    fn a_pushed_ops_text_is_kept_as_sent_and_decodes_as_the_op() {
        // Our encoding, and the same op with its fields in another order.
        let reordered = r#"{"body":{"key":"r","k":"reminder.dismiss"},"device":"d_aaaa000000000001","hlc":"0001764864000123.00000.d_aaaa000000000001","id":"d_aaaa000000000001:6","base":null}"#;
        let frame = format!(r#"{{"v":1,"t":"push","ops":[{OP}, {reordered}]}}"#);
        let ops = pushed(&frame);
        assert_eq!(ops[0].json, OP);
        assert_eq!(ops[1].json, reordered);
        let ClientMsg::Push { ops: want } = decode_client(&frame).unwrap() else {
            panic!("not a push")
        };
        for (p, w) in ops.iter().zip(&want) {
            assert_eq!(&p.op, w);
            assert_eq!(&serde_json::from_str::<Op>(&p.json).unwrap(), w);
        }
    }

    #[test]
    fn a_padded_op_is_kept_as_this_crate_encodes_it() {
        // Each decodes as OP's op; none may be stored longer than we write it.
        for padded in [
            OP.replace(',', " ,\n "),
            OP.replace(r#""key":"r""#, r#""key":"\u0072""#),
            OP.replace(r#""key":"r""#, r#""key":"\/r""#),
            // A key twice: `Body` reads the last (when "k" is not first).
            OP.replace(
                r#"{"k":"reminder.dismiss","key":"r"}"#,
                r#"{"key":"xxxxxxxx","key":"r","k":"reminder.dismiss"}"#,
            ),
            OP.replace(
                r#"{"k":"reminder.dismiss","#,
                r#"{"k":"reminder.dismiss","k":"reminder.dismiss","#,
            ),
        ] {
            let ops = pushed(&format!(r#"{{"v":1,"t":"push","ops":[{padded}]}}"#));
            let ours = serde_json::to_string(&ops[0].op).unwrap();
            assert_eq!(ops[0].json, ours, "{padded}");
        }
        // What our encoder writes itself is kept: the escapes of a quote, a
        // backslash, CR, LF and tab; spaces and UTF-8 in strings.
        let ics = r#""ics":"a \"b\" \\ \r\n\t é""#;
        let text = OP.replace(
            r#"{"k":"reminder.dismiss","key":"r"}"#,
            &format!(r#"{{"k":"series.put","calendar":"c","uid":"u",{ics}}}"#),
        );
        let ops = pushed(&format!(r#"{{"v":1,"t":"push","ops":[{text}]}}"#));
        assert_eq!(ops[0].json, text);
        assert_eq!(ops[0].json, serde_json::to_string(&ops[0].op).unwrap());
    }

    #[test]
    fn an_op_with_an_unknown_field_is_kept_as_this_crate_encodes_it() {
        let extra = OP.replace(r#""body":"#, r#""later":[1,2,3],"body":"#);
        let ops = pushed(&format!(r#"{{"v":1,"t":"push","ops":[{extra}]}}"#));
        assert_eq!(ops[0].json, serde_json::to_string(&ops[0].op).unwrap());
        assert!(!ops[0].json.contains("later"), "{}", ops[0].json);
    }

    #[test]
    fn an_op_whose_body_has_an_unknown_field_is_kept_as_this_crate_encodes_it() {
        for (from, to) in [
            (r#""key":"r"}"#, r#""key":"r","later":{"x":1}}"#),
            (
                r#"{"k":"reminder.dismiss","#,
                r#"{"later":1,"k":"reminder.dismiss","#,
            ),
            (r#""key":"r"}"#, r#""k\u0065y2":"r","key":"r"}"#),
        ] {
            let odd = OP.replace(from, to);
            assert_ne!(odd, OP);
            let ops = pushed(&format!(r#"{{"v":1,"t":"push","ops":[{odd}]}}"#));
            assert_eq!(ops[0].json, OP, "{odd}");
        }
        // Every field this crate writes is one the check knows: an op of
        // each kind, with every optional field set, keeps its text.
        let until = chrono::DateTime::from_timestamp(1_900_000_000, 0).unwrap();
        let bodies = [
            r#"{"k":"calendar.put","calendar":"c","name":"n","color":"x"}"#.to_owned(),
            r#"{"k":"calendar.delete","calendar":"c"}"#.to_owned(),
            r#"{"k":"series.put","calendar":"c","uid":"u","ics":"BEGIN:VEVENT\r\nEND:VEVENT"}"#
                .to_owned(),
            r#"{"k":"series.delete","calendar":"c","uid":"u","caldav":true}"#.to_owned(),
            r#"{"k":"calendar.work","calendar":"c","week":31,"holidays":true}"#.to_owned(),
            r#"{"k":"calendar.feed","calendar":"c","url":"https://x/","every":3600,"removed":true}"#
                .to_owned(),
            format!(
                r#"{{"k":"reminder.snooze","key":"r","until":"{}"}}"#,
                crate::utc::format(&until)
            ),
            r#"{"k":"account.zone","zone":"America/Argentina/Buenos_Aires"}"#.to_owned(),
        ];
        for body in bodies {
            let op = OP.replace(r#"{"k":"reminder.dismiss","key":"r"}"#, &body);
            let ops = pushed(&format!(r#"{{"v":1,"t":"push","ops":[{op}]}}"#));
            assert_eq!(ops[0].json, op);
            let ours: serde_json::Value = serde_json::to_value(&ops[0].op).unwrap();
            let keys: Vec<_> = ours["body"].as_object().unwrap().keys().cloned().collect();
            let known = super::fields(ours["body"]["k"].as_str().unwrap());
            assert!(
                keys.iter().all(|k| k == "k" || known.contains(&k.as_str())),
                "{keys:?}"
            );
        }
    }

    #[test]
    fn a_push_is_refused_as_decode_client_refuses_it() {
        for frame in [
            r#"{"v":1,"t":"push","ops":[{"id":"d1:1"}]}"#.to_owned(),
            r#"{"v":1,"t":"push","ops":{}}"#.to_owned(),
            r#"{"v":1,"t":"push"}"#.to_owned(),
            r#"{"v":1,"t":"push","ops":null}"#.to_owned(),
            r#"[1,"push",[]]"#.to_owned(),
            r#"{"v":1,"t":"push","t":"push","ops":[]}"#.to_owned(),
            format!(r#"{{"v":1,"t":"push","ops":[{OP},{OP}]}}"#),
            format!(r#"{{"v":2,"t":"push","ops":[{OP}]}}"#),
        ] {
            let want = decode_client(&frame).unwrap_err();
            let got = decode_client_frame(&frame).unwrap_err();
            assert_eq!(got.close_code(), want.close_code(), "{frame}");
            if !frame.contains("\"id\":\"d1:1\"") {
                assert_eq!(got.to_string(), want.to_string(), "{frame}");
            }
        }
    }
}
