//! Integration tests of the calendar core, one binary (see STYLE.md).

mod alarm_keys;
mod corpus;
mod corpus_real;
mod corruption;
mod dst;
mod interop;
mod lenient;
mod lenient_keep;
mod lenient_rules;
mod lenient_text;
mod props;
mod rfc_examples;
mod support;
mod tasks;
mod upcoming;
mod workdays;
mod zone_law;
