//! Kairos sync protocol, version 1: what travels between a device and
//! `kairos-server`, and how every replica decides the same thing. The
//! contract is `docs/sync-protocol.md`; this crate is its code.
//!
//! What it owns:
//! - the wire messages ([`ClientMsg`], [`ServerMsg`]) and their JSON text
//!   frames: [`encode`], [`decode_client`], [`decode_server`]. Decoding
//!   checks size, then the version (an unknown major version is
//!   [`ProtoError::Version`], close 4409, naming both), then the type, then
//!   every bound of the protocol; each [`ProtoError`] says which close code
//!   ends the connection ([`ProtoError::close`]);
//! - ops ([`Op`], [`Body`]) and their entities;
//! - the hybrid logical clock ([`Hlc`], [`HlcClock`]);
//! - the merge rules: [`lww`] for calendars and series, [`AckState`] for
//!   reminder acknowledgements, [`Replica`] as the reference model, and
//!   [`survivors`] (what compaction must keep);
//! - the shapes of names: [`ids`] (accounts, devices, tokens, pairing codes).
//!
//! What it does not know: sockets, tokio, SQL, files, or the clock (every
//! time is an argument). The server (`kairos-server`) and the device's
//! client (`kairos-sync`) do the I/O around it.
//!
//! ```
//! use kairos_proto::{Body, ClientMsg, HlcClock, Op, decode_client, encode};
//!
//! let mut clock = HlcClock::new("d_4f1c2a9b0e7d3c5a", None);
//! let op = Op::new(1, clock.issue(1_764_864_000_123), Body::ReminderDismiss {
//!     key: "cal/standup/2026-12-04T16:00:00Z/#0@745c1657".into(),
//! });
//! let frame = encode(&ClientMsg::Push { ops: vec![op] });
//! assert!(frame.starts_with(r#"{"v":1,"t":"push","ops":[{"id":"d_4f1c2a9b0e7d3c5a:1","#));
//! assert!(matches!(decode_client(&frame)?, ClientMsg::Push { .. }));
//!
//! let err = decode_client(r#"{"v":2,"t":"hello"}"#).unwrap_err();
//! assert_eq!(err.to_string(), "server speaks sync v1, device sent v2");
//! assert_eq!(err.close_code(), 4409);
//! # Ok::<(), kairos_proto::ProtoError>(())
//! ```

mod body_de;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod hlc;
pub mod ids;
mod merge;
mod op;
mod push_de;
pub mod utc;
mod wire;

pub use error::{Close, Peer, ProtoError, close_reason};
pub use hlc::{Hlc, HlcClock, HlcParseError, MAX_COUNTER, MAX_MS};
pub use merge::{
    AckChange, AckState, Applied, Effective, Replica, Stored, Verdict, lww, survivors,
};
pub use op::{Body, Effect, Op};
pub use push_de::{ClientFrame, PushedOp, decode_client_frame};
pub use wire::{
    ClientMsg, DeviceInfo, Message, PushResult, SeqOp, ServerMsg, decode_client, decode_server,
    encode,
};

use std::time::Duration;

/// The protocol's major version, `"v"` in every message.
pub const PROTOCOL_VERSION: u64 = 1;
/// The op kind `calendar.work` (account settings: working week, holiday
/// flag), added to v1 after its first release: named in `hello`/`welcome`
/// `features` by peers that know it.
pub const FEATURE_WORK: &str = "calendar.work";
/// The op kind `calendar.feed` (a calendar's ICS subscription, issue #19:
/// each device fetches the feed itself), added to v1 after its first
/// release.
pub const FEATURE_FEED: &str = "calendar.feed";
/// The op kind `account.zone` (the zone a device reads floating times
/// in, for the server's reminders), added to v1 after its first release.
pub const FEATURE_ZONE: &str = "account.zone";
/// Every feature this build knows, as it names them in `hello`/`welcome`.
pub const FEATURES: &[&str] = &[FEATURE_WORK, FEATURE_FEED, FEATURE_ZONE];
/// A zone name in an `account.zone` op, in bytes.
pub const MAX_ZONE_BYTES: usize = 64;
/// A feed URL in a `calendar.feed` op, in bytes.
pub const MAX_URL_BYTES: usize = 2048;
/// The shortest refresh interval of a `calendar.feed` op (5 minutes).
pub const MIN_FEED_EVERY_SECS: u32 = 5 * 60;
/// The longest refresh interval of a `calendar.feed` op (7 days).
pub const MAX_FEED_EVERY_SECS: u32 = 7 * 24 * 3600;
/// The largest frame or message, in bytes (1 MiB); larger closes with 1009.
pub const MAX_FRAME: usize = 1 << 20;
/// The most ops in one `push` or one `ops` message.
pub const MAX_OPS_PER_MESSAGE: usize = 500;
/// The same bound, under the name of the `push` rule.
pub const MAX_OPS_PER_PUSH: usize = MAX_OPS_PER_MESSAGE;
/// Ids and keys (op ids, calendar and series uids, reminder keys), in bytes.
pub const MAX_ID_BYTES: usize = 512;
/// Names (device, calendar, color, client), in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// A series' `ics`, in bytes.
pub const MAX_ICS_BYTES: usize = 256 * 1024;
/// How long the server waits for `hello` after the upgrade.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a pairing code works.
pub const PAIRING_TTL: Duration = Duration::from_secs(15 * 60);
/// Per device: at most this many messages in any second…
pub const RATE_MESSAGES_PER_SEC: u32 = 200;
/// …and at most this many ops.
pub const RATE_OPS_PER_SEC: u32 = 5_000;
/// The path of the session endpoint (`Authorization: Bearer TOKEN`).
pub const PATH_SYNC: &str = "/v1/sync";
/// The path of the pairing endpoint (`Authorization: Pairing CODE`, `?name=`).
pub const PATH_JOIN: &str = "/v1/join";
