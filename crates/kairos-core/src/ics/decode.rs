//! Bytes → text. iCalendar is UTF-8 (RFC 5545 §3.1.4), but files written by
//! older Outlook versions, Windows tools and some feeds are Latin-1 or
//! Windows-1252. Invalid UTF-8 sequences are read as Windows-1252 (a superset
//! of Latin-1's printable characters), so a mostly-UTF-8 file with one stray
//! byte keeps its valid characters.

use std::borrow::Cow;

use super::warning::{At, Sink};
use crate::error::Error;

/// Windows-1252's characters for 0x80..=0x9F; the five bytes it leaves
/// undefined map to the C1 control of the same value, as WHATWG's decoder does.
const CP1252_80_9F: [char; 32] = [
    '\u{20ac}', '\u{81}', '\u{201a}', '\u{192}', '\u{201e}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{2c6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8d}', '\u{17d}', '\u{8f}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{2dc}', '\u{2122}', '\u{161}', '\u{203a}', '\u{153}', '\u{9d}', '\u{17e}', '\u{178}',
];

fn cp1252(b: u8) -> char {
    match b {
        0x80..=0x9f => CP1252_80_9F[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

/// The input as text. Not UTF-8: strict reading refuses it naming the line
/// of the first bad byte; lenient reading decodes the bad bytes as
/// Windows-1252 and warns once.
pub(crate) fn text<'a>(input: &'a [u8], sink: &mut Sink) -> Result<Cow<'a, str>, Error> {
    let e = match std::str::from_utf8(input) {
        Ok(s) => return Ok(Cow::Borrowed(s)),
        Err(e) => e,
    };
    let line = input[..e.valid_up_to()]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    sink.repair(
        Error::syntax(line, "the file is not valid UTF-8 text"),
        At::CALENDAR,
        "read its non-UTF-8 bytes as Windows-1252 (Latin-1)",
    )?;
    let mut out = String::with_capacity(input.len() + input.len() / 8);
    for chunk in input.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(chunk.invalid().iter().map(|&b| cp1252(b)));
    }
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_and_cp1252_bytes_decode_and_utf8_stays() {
        let mut sink = Sink::lenient();
        let got = text(b"Caf\xe9 \x80 \xc3\xa9t\xe9", &mut sink).expect("lenient");
        assert_eq!(got, "Café € été");
        assert_eq!(sink.into_warnings().len(), 1);
        let mut strict = Sink::strict();
        assert!(text(b"a\n\xe9", &mut strict).is_err());
    }
}
