//! Integration tests of the sync client against the real server, one test
//! binary (STYLE.md): each test embeds `kairos-server` through
//! `kairos_server::run` on `127.0.0.1:0` with a fresh data directory, and
//! gives each device a fresh database file.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod live;
mod outbox;
mod pairing;
mod protocol;
mod state;
mod support;
mod tls;
mod work;
