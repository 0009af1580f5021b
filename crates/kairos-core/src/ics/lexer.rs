//! RFC 5545 §3.1 content lines: unfolding, `NAME;PARAM=V:VALUE` splitting, and the
//! `BEGIN`/`END` component tree, each piece remembering the line it came from so
//! every later error can name it.
//!
//! This layer knows nothing of what properties mean; `ics::import` does.

use std::borrow::Cow;

use super::decode;
use super::structure::Tree;
use super::warning::{At, Sink};
use crate::error::{Error, Limits};

/// One parameter of a content line: `TZID=Europe/Berlin`, `MEMBER="a","b"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Upper-cased parameter name.
    pub name: String,
    /// Values, quotes removed, in file order.
    pub values: Vec<String>,
}

/// An unfolded content line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// 1-based line number of the first physical line, for error messages.
    pub line: usize,
    /// Upper-cased property name (`DTSTART`, `X-WR-CALNAME`).
    pub name: String,
    /// Parameters in file order.
    pub params: Vec<Param>,
    /// The raw value, still escaped (unescaping depends on the value type).
    pub value: String,
}

impl Property {
    /// The first value of parameter `name` (upper-case), if present.
    #[must_use]
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.values.first())
            .map(String::as_str)
    }
}

/// A `BEGIN:X … END:X` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// Upper-cased component name (`VEVENT`).
    pub name: String,
    /// Line of the `BEGIN`.
    pub line: usize,
    /// Properties in file order.
    pub props: Vec<Property>,
    /// Nested components in file order.
    pub children: Vec<Component>,
}

impl Component {
    /// The first property called `name`.
    #[must_use]
    pub fn prop(&self, name: &str) -> Option<&Property> {
        self.props.iter().find(|p| p.name == name)
    }

    /// Every property called `name`.
    pub fn props_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Property> + 'a {
        self.props.iter().filter(move |p| p.name == name)
    }
}

/// One unfolded logical line.
struct Logical<'a> {
    /// 1-based number of its first physical line.
    line: usize,
    text: Cow<'a, str>,
    /// Bytes in its last physical line (with the fold's leading space): a
    /// line cut at the fold width is visibly unfinished, which decides
    /// whether a stray line after it may continue it (`structure`).
    tail: usize,
}

/// Splits `input` into unfolded logical lines with their starting line numbers.
///
/// Accepts CRLF and bare LF; a line starting with a space or tab continues the
/// previous one (RFC 5545 §3.1). A continuation before any line is an error
/// (lenient: skipped). Unfolded lines borrow from `input` unless they were folded.
fn unfold<'a>(input: &'a str, limits: &Limits, sink: &mut Sink) -> Result<Vec<Logical<'a>>, Error> {
    let too_long = |line_no: usize| {
        Error::syntax(
            line_no,
            format!(
                "a content line is longer than {} bytes",
                limits.max_line_bytes
            ),
        )
    };
    let mut out: Vec<Logical<'a>> = Vec::new();
    for (idx, raw) in input.split('\n').enumerate() {
        let line_no = idx + 1;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(rest) = raw.strip_prefix([' ', '\t']) {
            let Some(last) = out.last_mut() else {
                sink.repair(
                    Error::syntax(
                        line_no,
                        "a folded continuation line comes before any property",
                    ),
                    At::CALENDAR,
                    "skipped",
                )?;
                continue;
            };
            if last.text.len() + rest.len() > limits.max_line_bytes {
                return Err(too_long(line_no));
            }
            last.text.to_mut().push_str(rest);
            last.tail = raw.len();
        } else if raw.trim().is_empty() {
            // Blank lines are not allowed by the RFC but are common at the end of
            // files; skipping them loses nothing.
        } else {
            if raw.len() > limits.max_line_bytes {
                return Err(too_long(line_no));
            }
            out.push(Logical {
                line: line_no,
                text: Cow::Borrowed(raw),
                tail: raw.len(),
            });
        }
    }
    Ok(out)
}

pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// Parses one unfolded line into a [`Property`], handing each broken
/// parameter (no `=value`, no name, an unterminated quote) to `bad_param`:
/// its `Err` refuses the line (strict), its `Ok` drops that parameter alone
/// and reads on (lenient).
pub(crate) fn parse_line_with(
    line: usize,
    text: &str,
    mut bad_param: impl FnMut(Error) -> Result<(), Error>,
) -> Result<Property, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let name_end = text.find(|c: char| !is_name_char(c)).unwrap_or(text.len());
    let name = &text[..name_end];
    if name.is_empty() {
        return Err(Error::syntax(
            line,
            format!("expected a property name, found {:?}", preview(text)),
        ));
    }
    let name = name.to_ascii_uppercase();
    let mut rest = &text[name_end..];
    let mut params = Vec::new();
    while let Some(after) = rest.strip_prefix(';') {
        let pname_end = after
            .find(|c: char| !is_name_char(c))
            .unwrap_or(after.len());
        let pname = after[..pname_end].to_ascii_uppercase();
        let Some(mut vals) = after[pname_end..].strip_prefix('=') else {
            bad_param(Error::property(
                line,
                &name,
                format!("parameter {pname:?} has no '=value'"),
            ))?;
            rest = skip_value(&after[pname_end..]);
            continue;
        };
        if pname.is_empty() {
            bad_param(Error::property(line, &name, "empty parameter name"))?;
            rest = skip_value(vals);
            continue;
        }
        let mut values = Vec::new();
        loop {
            if let Some(q) = vals.strip_prefix('"') {
                let Some(close) = q.find('"') else {
                    bad_param(Error::property(
                        line,
                        &name,
                        format!("parameter {pname} has an unterminated quote"),
                    ))?;
                    // Its value runs to where an unquoted one would end.
                    values.clear();
                    vals = skip_value(q);
                    break;
                };
                values.push(q[..close].to_owned());
                vals = &q[close + 1..];
            } else {
                let end = vals.find([',', ';', ':']).unwrap_or(vals.len());
                values.push(vals[..end].to_owned());
                vals = &vals[end..];
            }
            match vals.strip_prefix(',') {
                Some(more) => vals = more,
                None => break,
            }
        }
        if !values.is_empty() {
            params.push(Param {
                name: pname,
                values,
            });
        }
        rest = vals;
    }
    let Some(value) = rest.strip_prefix(':') else {
        return Err(Error::property(line, &name, "missing ':' before the value"));
    };
    Ok(Property {
        line,
        name,
        params,
        value: value.to_owned(),
    })
}

/// `s` from the end of an unquoted parameter value (the next `;` or `:`).
fn skip_value(s: &str) -> &str {
    &s[s.find([';', ':']).unwrap_or(s.len())..]
}

pub(crate) fn preview(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Parses a whole iCalendar stream into its top-level components.
///
/// # Errors
/// Non-UTF-8 text, a malformed line, `BEGIN` without `END` (or the reverse), nesting
/// or component counts past `limits`.
pub fn parse(input: &[u8], limits: &Limits) -> Result<Vec<Component>, Error> {
    parse_with(input, limits, &mut Sink::strict())
}

/// [`parse`] in either mode: lenient reading skips or repairs broken lines
/// and unbalanced `BEGIN`/`END`s (see `structure`), recording warnings.
pub(crate) fn parse_with(
    input: &[u8],
    limits: &Limits,
    sink: &mut Sink,
) -> Result<Vec<Component>, Error> {
    if input.len() > limits.max_file_bytes {
        return Err(Error::Limit(format!(
            "the file is {} bytes; the limit is {} bytes",
            input.len(),
            limits.max_file_bytes
        )));
    }
    let text = decode::text(input, sink)?;
    let lines = unfold(&text, limits, sink)?;
    let mut tree = Tree::default();
    for Logical { line, text, tail } in lines {
        let parsed = parse_line_with(line, &text, |e| {
            sink.repair(e, tree.here(), "this parameter dropped")
        });
        match parsed {
            Ok(prop) => tree.add(prop, limits, sink)?,
            Err(e) => tree.misfit(e, line, &text, limits, sink)?,
        }
        tree.tail = tail;
    }
    tree.finish(sink)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfolds_and_splits_params_with_quotes() {
        let ics = "BEGIN:VCALENDAR\r\nX-A;P=\"a:b\",c;Q=d:val\r\n ue:more\r\nEND:VCALENDAR\r\n";
        let c = parse(ics.as_bytes(), &Limits::default()).expect("valid");
        let p = &c[0].props[0];
        assert_eq!(p.name, "X-A");
        assert_eq!(p.params[0].values, vec!["a:b", "c"]);
        assert_eq!(p.param("Q"), Some("d"));
        assert_eq!(p.value, "value:more");
    }

    #[test]
    fn begin_without_end_names_the_line() {
        let ics = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:x\nEND:VCALENDAR\n";
        let e = parse(ics.as_bytes(), &Limits::default()).expect_err("broken");
        assert_eq!(
            e.to_string(),
            "line 4: END: END:VCALENDAR closes BEGIN:VEVENT from line 2"
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for junk in [
            &b"\xff\xfe\x00"[..],
            b"   ",
            b":::",
            b" folded first",
            b"BEGIN:\n",
        ] {
            assert!(parse(junk, &Limits::default()).is_err(), "{junk:?}");
        }
    }
}
