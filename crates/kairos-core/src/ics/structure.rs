//! The `BEGIN`/`END` component tree, built one parsed content line at a time.
//!
//! Strict reading refuses the first structural problem. Lenient reading keeps
//! what it can, and loses no more than the broken line:
//! - stray properties outside any component and unmatched `END`s are
//!   skipped; an `END` that closes an outer component also closes the ones
//!   left open inside it; components still open at the end of the file are
//!   closed there;
//! - a misspelt `END` (`END:VTOOD`) closes the component it misspells, and a
//!   `BEGIN` of a component that cannot stand where it is (a `VEVENT` inside a
//!   `VTODO`: that one's `END` is missing) closes the open ones first, so one
//!   broken `END` never swallows the components after it (see `nesting`);
//! - a line that is not a content line continues the previous property only
//!   where that one is visibly unfinished (see [`Tree::misfit`]); otherwise
//!   it is skipped alone.

use super::lexer::{Component, Property, is_name_char, preview};
use super::nesting::{can_hold, misspelt};
use super::warning::{At, Sink};
use crate::error::{Error, Limits};

/// A physical line at least this long was cut at the fold width (75 octets
/// in RFC 5545 §3.1; some folders cut at 72–74): a line after it that lacks
/// the leading space most likely continues it.
const FOLD_WIDTH: usize = 70;

/// Properties whose value is free text (RFC 5545 TEXT, and `X-` ones, whose
/// type nobody declares): a raw line break inside one is a common producer
/// bug, and the next line is then the rest of the text.
fn is_free_text(name: &str) -> bool {
    matches!(
        name,
        "SUMMARY" | "DESCRIPTION" | "LOCATION" | "COMMENT" | "CONTACT" | "RESOURCES" | "CATEGORIES"
    ) || name.starts_with("X-")
}

#[derive(Debug, Default)]
pub(crate) struct Tree {
    /// Components open at this point, outermost first.
    stack: Vec<Component>,
    /// Closed top-level components.
    top: Vec<Component>,
    /// `BEGIN`s so far, for `Limits::max_components`.
    count: usize,
    /// Whether the last line read was a property, which a mis-folded line may
    /// continue.
    last_was_prop: bool,
    /// Bytes in the last physical line read (set by the lexer after each
    /// line).
    pub(crate) tail: usize,
}

fn at(c: &Component) -> At<'_> {
    At::new(&c.name, None)
}

impl Tree {
    pub(crate) fn here(&self) -> At<'_> {
        self.stack.last().map_or(At::CALENDAR, at)
    }

    fn close(&mut self, done: Component) {
        match self.stack.last_mut() {
            Some(parent) => parent.children.push(done),
            None => self.top.push(done),
        }
    }

    /// Adds one parsed content line.
    pub(crate) fn add(
        &mut self,
        prop: Property,
        limits: &Limits,
        sink: &mut Sink,
    ) -> Result<(), Error> {
        let line = prop.line;
        self.last_was_prop = false;
        match prop.name.as_str() {
            "BEGIN" => {
                let name = prop.value.trim().to_ascii_uppercase();
                if name.is_empty() || !name.chars().all(is_name_char) {
                    let e = Error::property(
                        line,
                        "BEGIN",
                        format!("invalid component name {:?}", preview(&prop.value)),
                    );
                    return sink.repair(e, self.here(), "line skipped");
                }
                self.count += 1;
                if self.count > limits.max_components {
                    return Err(Error::Limit(format!(
                        "more than {} components in one file",
                        limits.max_components
                    )));
                }
                self.close_unfit(&name, line, sink)?;
                if self.stack.len() >= limits.max_depth {
                    return Err(Error::syntax(
                        line,
                        format!("components nested deeper than {}", limits.max_depth),
                    ));
                }
                self.stack.push(Component {
                    name,
                    line,
                    props: Vec::new(),
                    children: Vec::new(),
                });
            }
            "END" => {
                let name = prop.value.trim().to_ascii_uppercase();
                let Some(open) = self.stack.last() else {
                    let e = Error::property(
                        line,
                        "END",
                        format!("END:{name} without a matching BEGIN"),
                    );
                    return sink.repair(e, At::CALENDAR, "line skipped");
                };
                if open.name != name {
                    let e = Error::property(
                        line,
                        "END",
                        format!(
                            "END:{name} closes BEGIN:{} from line {}",
                            open.name, open.line
                        ),
                    );
                    if !self.stack.iter().any(|c| c.name == name) {
                        if misspelt(&name, &open.name) {
                            let action = format!("read as END:{}", open.name);
                            sink.repair(e, at(open), &action)?;
                            if let Some(done) = self.stack.pop() {
                                self.close(done);
                            }
                            return Ok(());
                        }
                        return sink.repair(e, at(open), "line skipped");
                    }
                    sink.repair(e, at(open), "closed it here")?;
                    while let Some(inner) = self.stack.pop_if(|c| c.name != name) {
                        self.close(inner);
                    }
                }
                if let Some(done) = self.stack.pop() {
                    self.close(done);
                }
            }
            _ => match self.stack.last_mut() {
                Some(c) => {
                    c.props.push(prop);
                    self.last_was_prop = true;
                }
                None => {
                    let e = Error::property(
                        line,
                        &prop.name,
                        "property outside of any BEGIN:VCALENDAR",
                    );
                    return sink.repair(e, At::CALENDAR, "line skipped");
                }
            },
        }
        Ok(())
    }

    /// A line that did not parse as a content line (`err` says why): the rest
    /// of the previous property when it does not start like a property and
    /// that one is visibly unfinished (a mis-folded line, written without the
    /// leading space); otherwise skipped alone.
    pub(crate) fn misfit(
        &mut self,
        err: Error,
        line: usize,
        text: &str,
        limits: &Limits,
        sink: &mut Sink,
    ) -> Result<(), Error> {
        if sink.is_strict() {
            return Err(err);
        }
        let name_end = text.find(|c: char| !is_name_char(c)).unwrap_or(text.len());
        let starts_like_property = name_end > 0 && text[name_end..].starts_with([';', ':']);
        let tail = self.tail;
        let stray = !starts_like_property && self.last_was_prop;
        if stray
            && let Some(open) = self.stack.last_mut()
            && let Some(prev) = open.props.last_mut()
        {
            if !unfinished(prev, tail) {
                let problem = Error::syntax(
                    line,
                    format!(
                        "{:?} is not a content line, and the {} line before it is complete",
                        preview(text),
                        prev.name
                    ),
                );
                self.last_was_prop = false;
                return sink.repair(problem, At::new(&open.name, None), "line skipped");
            }
            if prev.value.len() + text.len() > limits.max_line_bytes {
                return Err(Error::syntax(
                    line,
                    format!(
                        "a content line is longer than {} bytes",
                        limits.max_line_bytes
                    ),
                ));
            }
            let problem = Error::syntax(
                line,
                format!(
                    "{:?} is not a content line and does not start with a space",
                    preview(text)
                ),
            );
            prev.value.push_str(text);
            return sink.repair(
                problem,
                At::new(&open.name, None),
                "appended to the previous line (mis-folded)",
            );
        }
        self.last_was_prop = false;
        sink.repair(err, self.here(), "line skipped")
    }

    /// Closes the open components that cannot hold a `BEGIN:name` (their
    /// `END` is missing or misspelt), innermost first.
    fn close_unfit(&mut self, name: &str, line: usize, sink: &mut Sink) -> Result<(), Error> {
        while let Some(open) = self.stack.last()
            && !can_hold(Some(&open.name), name)
        {
            let e = Error::property(
                line,
                "BEGIN",
                format!(
                    "BEGIN:{name} cannot stand inside BEGIN:{} from line {}, which has no END",
                    open.name, open.line
                ),
            );
            sink.repair(e, at(open), &format!("closed {} before it", open.name))?;
            if let Some(done) = self.stack.pop() {
                self.close(done);
            }
        }
        Ok(())
    }

    /// The top-level components, once every line is read.
    pub(crate) fn finish(mut self, sink: &mut Sink) -> Result<Vec<Component>, Error> {
        while let Some(open) = self.stack.pop() {
            let e = Error::syntax(
                open.line,
                format!("BEGIN:{} is never closed by END:{}", open.name, open.name),
            );
            sink.repair(e, at(&open), "closed at the end of the file")?;
            self.close(open);
        }
        if self.top.is_empty() {
            return Err(Error::syntax(
                1,
                "no BEGIN:VCALENDAR found: this is not an iCalendar file",
            ));
        }
        Ok(self.top)
    }
}

/// Is `prev` visibly unfinished, so that a stray line after it (`tail`:
/// the length of its last physical line) is more likely its rest than a line
/// of its own? Free text can always go on; anything else only when it was cut
/// at the fold width or in the middle of an escape. A complete `DTSTART` or
/// `UID` is never glued to (that corrupted them: a date that no longer
/// parses, a UID with an address on its end).
fn unfinished(prev: &Property, tail: usize) -> bool {
    is_free_text(&prev.name) || tail >= FOLD_WIDTH || prev.value.ends_with('\\')
}
