//! Integration tests of the real `kairos-server` binary, one test binary
//! (STYLE.md): each test starts the server on a fresh data directory on
//! `127.0.0.1:0` and talks to it as devices would.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod batches;
mod durability;
mod embed;
mod features;
mod limits;
mod pairing;
mod support;
mod sync;
mod tls;
