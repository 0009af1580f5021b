//! Integration tests of the store, one binary (STYLE.md): real SQLite files in
//! a fresh temporary directory per test, no mocks.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod batch;
mod concurrency;
mod deliveries;
mod events;
mod failures;
mod instances;
mod lease;
mod open;
mod support;
mod worktime;
