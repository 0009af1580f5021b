//! Integration tests of the protocol crate, one binary (STYLE.md).

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod body;
mod corpus;
mod hlc;
mod merge;
mod support;
mod wire;
