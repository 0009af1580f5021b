//! The `BEGIN`/`END` component tree, built one parsed content line at a time.
//!
//! Strict reading refuses the first structural problem. Lenient reading keeps
//! what it can: stray properties outside any component and unmatched `END`s
//! are skipped, an `END` that closes an outer component also closes the ones
//! left open inside it, components still open at the end of the file are
//! closed there, and a line that is not a content line is appended to the
//! previous property when it does not start like one (a mis-folded line,
//! written without the leading space) or skipped when it does.

use super::lexer::{Component, Property, is_name_char, preview};
use super::warning::{At, Sink};
use crate::error::{Error, Limits};

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
}

fn at(c: &Component) -> At<'_> {
    At::new(&c.name, None)
}

impl Tree {
    fn here(&self) -> At<'_> {
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

    /// A line that did not parse as a content line (`err` says why).
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
        if !starts_like_property
            && self.last_was_prop
            && let Some(open) = self.stack.last_mut()
            && let Some(prev) = open.props.last_mut()
        {
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
