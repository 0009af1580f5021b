//! Integration tests of the real `kairos-server` binary, one test binary
//! (STYLE.md): each test starts the server on a fresh data directory on
//! `127.0.0.1:0` and talks to it as devices would. With
//! `KAIROS_TEST_STORE=postgres` every server's store is a fresh database in
//! a throw-away PostgreSQL cluster (`pg.rs`) instead of SQLite: the same
//! tests on both stores. The tests of several instances (`instances.rs`)
//! use PostgreSQL in either run.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod admin;
mod batches;
mod certs;
mod durability;
mod embed;
mod endpoints;
mod features;
mod instances;
mod limits;
mod maker;
mod ops_table;
mod pairing;
mod pg;
mod pg_compaction;
mod pg_ingest;
// Its proxy reaches PostgreSQL over the test cluster's Unix socket.
#[cfg(unix)]
mod pg_round_trips;
mod pg_schema11;
mod pg_schema8;
mod pg_tls;
mod presence;
mod pushed_text;
mod receiver;
mod remind;
mod remind_deleted;
mod remind_group;
mod remind_https;
mod remind_mail;
mod remind_mail_tls;
mod remind_metrics;
mod remind_ops;
mod remind_reconfigure;
mod remind_scan;
mod remind_schema10;
mod remind_send;
mod remind_shared;
mod remind_snooze;
mod remind_snooze_return;
mod remind_test_fallback;
mod remind_wake;
mod remind_zone;
mod support;
mod sync;
mod tls;
mod wal;
