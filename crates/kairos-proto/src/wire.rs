//! Messages and their JSON text frames (`docs/sync-protocol.md`, "Messages").

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{Peer, ProtoError};
use crate::ids::{check_device, check_id, check_name, is_account, is_token};
use crate::op::Op;
use crate::{MAX_FRAME, MAX_OPS_PER_MESSAGE, PROTOCOL_VERSION};

/// A message from a device to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ClientMsg {
    /// The first message of a session.
    Hello {
        /// The highest seq this device has applied (0 for none).
        cursor: u64,
        /// The client's name and version, for the server's logs.
        client: String,
        /// Op kinds beyond v1's first six this client applies (see
        /// [`crate::FEATURES`]); absent from older clients, and a server
        /// sends such ops only to a client that names them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        features: Vec<String>,
    },
    /// New ops of this device.
    Push {
        /// At most [`MAX_OPS_PER_MESSAGE`], each of this device, ids unique.
        ops: Vec<Op>,
    },
    /// Asks for a pairing code for a new device of this account.
    Pair,
    /// Asks for the account's devices.
    Devices,
    /// Revokes a device of this account (this one: leaving).
    Revoke {
        /// Its id.
        device: String,
    },
}

/// An op with the seq the server gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqOp {
    /// The op's sequence number within its account.
    pub seq: u64,
    /// The op.
    pub op: Op,
}

/// The seq a pushed op got (its first one, if it was pushed before).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushResult {
    /// The op's id.
    pub id: String,
    /// Its seq.
    pub seq: u64,
}

/// One device of the account, in `device_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Its id.
    pub device: String,
    /// The name it joined with.
    pub name: String,
    /// When it joined.
    #[serde(with = "crate::utc")]
    pub created_at: DateTime<Utc>,
    /// When it last started a session (`null`: never).
    #[serde(with = "crate::utc::option", default)]
    pub last_seen: Option<DateTime<Utc>>,
    /// Whether it was revoked.
    pub revoked: bool,
    /// Whether it has a session open now.
    pub connected: bool,
}

/// A message from the server to a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ServerMsg {
    /// The answer to `hello`.
    Welcome {
        /// The account, from the token.
        account: String,
        /// This device's id.
        device: String,
        /// The account's highest seq.
        head: u64,
        /// Whether the ops that follow are a snapshot (every op kept).
        snapshot: bool,
        /// Op kinds beyond v1's first six this server takes in a push
        /// (see [`crate::FEATURES`]); absent from older servers, and a
        /// client keeps such ops in its outbox until its server names them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        features: Vec<String>,
    },
    /// Ops, in seq order (catch-up or live).
    Ops {
        /// At most [`MAX_OPS_PER_MESSAGE`].
        ops: Vec<SeqOp>,
        /// The account's highest seq when sent.
        head: u64,
    },
    /// Catch-up is over; live ops follow.
    CaughtUp {
        /// The seq the device is now at.
        head: u64,
    },
    /// The answer to `push`, once the ops are durable: one result per op,
    /// in the push's order.
    Pushed {
        /// The seqs.
        results: Vec<PushResult>,
    },
    /// The answer to `pair`.
    Code {
        /// `XXXX-XXXX-XXXX`.
        code: String,
        /// When it stops working.
        #[serde(with = "crate::utc")]
        expires_at: DateTime<Utc>,
    },
    /// The answer to `devices`.
    DeviceList {
        /// Every device of the account, revoked ones too.
        devices: Vec<DeviceInfo>,
    },
    /// The answer to `revoke`.
    Revoked {
        /// The device revoked.
        device: String,
    },
    /// The only message on `/v1/join`: the new device's identity.
    Joined {
        /// The account it joined.
        account: String,
        /// Its id.
        device: String,
        /// Its credential (64 lowercase hex digits); shown once.
        token: String,
    },
    /// Something went wrong; usually followed by a close frame.
    Error {
        /// Machine-readable (`bad_message`, `not_found`, …).
        code: String,
        /// For people.
        message: String,
    },
}

/// A message as sent: `"v"` first, then the message's own fields.
#[derive(Serialize)]
struct Frame<'a, M> {
    v: u64,
    #[serde(flatten)]
    msg: &'a M,
}

/// Encodes a message as the text of one frame, with `"v":1`.
#[must_use]
pub fn encode<M: Message>(msg: &M) -> String {
    let frame = Frame {
        v: PROTOCOL_VERSION,
        msg,
    };
    // Serialising these types cannot fail: every map key is a string and
    // every value a string, number, bool, null, array or object.
    serde_json::to_string(&frame).unwrap_or_default()
}

/// The two message directions; only these can be encoded.
pub trait Message: Serialize + sealed::Sealed {}
impl Message for ClientMsg {}
impl Message for ServerMsg {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ClientMsg {}
    impl Sealed for super::ServerMsg {}
}

/// What is read before the message itself: the version and the type.
#[derive(Deserialize)]
struct Head {
    v: Option<serde_json::Value>,
    t: Option<serde_json::Value>,
}

const CLIENT_TYPES: &[&str] = &["hello", "push", "pair", "devices", "revoke"];
const SERVER_TYPES: &[&str] = &[
    "welcome",
    "ops",
    "caught_up",
    "pushed",
    "code",
    "device_list",
    "revoked",
    "joined",
    "error",
];

/// A push's fields, read straight into its ops. The type is known from
/// [`head`], so this skips serde's path for the internally tagged
/// [`ClientMsg`], which first copies the whole frame (every op) into a
/// buffered tree and then decodes the tree: the server's hottest decode.
#[derive(Deserialize)]
struct PushFrame {
    ops: Vec<Op>,
}

/// Size, then version, then type: the checks every frame gets first.
/// Returns the type.
fn head(text: &str, from: Peer, types: &[&str]) -> Result<String, ProtoError> {
    if text.len() > MAX_FRAME {
        return Err(ProtoError::TooBig {
            len: text.len(),
            max: MAX_FRAME,
        });
    }
    if !text.trim_start().starts_with('{') {
        return Err(ProtoError::Malformed("not a JSON object".into()));
    }
    let head: Head =
        serde_json::from_str(text).map_err(|e| ProtoError::Malformed(e.to_string()))?;
    let v = match head.v {
        None => return Err(ProtoError::Malformed("no \"v\" (protocol version)".into())),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| ProtoError::Malformed(format!("\"v\" is {v}, not a version number")))?,
    };
    if v != PROTOCOL_VERSION {
        return Err(ProtoError::version(v, from));
    }
    match head.t {
        None => Err(ProtoError::Malformed("no \"t\" (message type)".into())),
        Some(serde_json::Value::String(t)) if types.contains(&t.as_str()) => Ok(t),
        Some(serde_json::Value::String(t)) => {
            Err(ProtoError::UnknownType(t.chars().take(40).collect()))
        }
        Some(t) => Err(ProtoError::Malformed(format!(
            "\"t\" is {t:.40}, not a string"
        ))),
    }
}

fn body<'a, M: Deserialize<'a>>(text: &'a str) -> Result<M, ProtoError> {
    serde_json::from_str(text).map_err(|e| ProtoError::Malformed(e.to_string()))
}

/// Decodes a frame a device sent: size, version (4409 names both), type,
/// fields, then the bounds of the protocol (4400 names the field).
///
/// # Errors
/// [`ProtoError`], with the close code to use.
pub fn decode_client(text: &str) -> Result<ClientMsg, ProtoError> {
    let t = head(text, Peer::Device, CLIENT_TYPES)?;
    let msg: ClientMsg = if t == "push" {
        let push: PushFrame = body(text)?;
        ClientMsg::Push { ops: push.ops }
    } else {
        body(text)?
    };
    validate_client(&msg).map_err(ProtoError::Invalid)?;
    Ok(msg)
}

/// Decodes a frame the server sent, with the same checks.
///
/// # Errors
/// [`ProtoError`], with the close code to use.
pub fn decode_server(text: &str) -> Result<ServerMsg, ProtoError> {
    head(text, Peer::Server, SERVER_TYPES)?;
    let msg: ServerMsg = body(text)?;
    validate_server(&msg).map_err(ProtoError::Invalid)?;
    Ok(msg)
}

pub(crate) fn validate_ops<'a>(
    what: &str,
    ops: impl ExactSizeIterator<Item = &'a Op>,
) -> Result<(), String> {
    if ops.len() > MAX_OPS_PER_MESSAGE {
        return Err(format!(
            "{what}: {} ops, over {MAX_OPS_PER_MESSAGE}",
            ops.len()
        ));
    }
    let mut ids = HashSet::new();
    for (i, op) in ops.enumerate() {
        op.validate().map_err(|e| format!("{what}: op {i}: {e}"))?;
        if !ids.insert(op.id.as_str()) {
            return Err(format!("{what}: op {i}: id {} appears twice", op.id));
        }
    }
    Ok(())
}

fn validate_client(msg: &ClientMsg) -> Result<(), String> {
    match msg {
        ClientMsg::Hello {
            client, features, ..
        } => {
            check_name("hello: client", client)?;
            check_features("hello", features)
        }
        ClientMsg::Push { ops } => validate_ops("push", ops.iter()),
        ClientMsg::Pair | ClientMsg::Devices => Ok(()),
        ClientMsg::Revoke { device } => check_device("revoke: device", device),
    }
}

/// At most 32 feature names, each a short name (unknown ones are allowed:
/// a newer peer may know more).
fn check_features(what: &str, features: &[String]) -> Result<(), String> {
    if features.len() > 32 {
        return Err(format!("{what}: {} features, over 32", features.len()));
    }
    features
        .iter()
        .try_for_each(|f| check_name(&format!("{what}: feature"), f))
}

fn check_account(what: &str, account: &str) -> Result<(), String> {
    if is_account(account) {
        Ok(())
    } else {
        Err(format!(
            "{what} {account:.70?} is not an account id (1-64 of a-z 0-9 . _ -)"
        ))
    }
}

fn validate_server(msg: &ServerMsg) -> Result<(), String> {
    match msg {
        ServerMsg::Welcome {
            account,
            device,
            features,
            ..
        } => {
            check_account("welcome: account", account)?;
            check_device("welcome: device", device)?;
            check_features("welcome", features)
        }
        ServerMsg::Ops { ops, head } => {
            validate_ops("ops", ops.iter().map(|s| &s.op))?;
            if let Some(s) = ops.iter().find(|s| s.seq == 0 || s.seq > *head) {
                return Err(format!("ops: seq {} is not within 1..=head {head}", s.seq));
            }
            if ops.windows(2).any(|w| w[0].seq >= w[1].seq) {
                return Err("ops: seqs are not increasing".into());
            }
            Ok(())
        }
        ServerMsg::CaughtUp { .. } | ServerMsg::Code { .. } => Ok(()),
        ServerMsg::Pushed { results } => {
            if results.len() > MAX_OPS_PER_MESSAGE {
                return Err(format!(
                    "pushed: {} results, over {MAX_OPS_PER_MESSAGE}",
                    results.len()
                ));
            }
            results
                .iter()
                .try_for_each(|r| check_id("pushed: id", &r.id))
        }
        ServerMsg::DeviceList { devices } => devices.iter().try_for_each(|d| {
            check_device("device_list: device", &d.device)?;
            check_name("device_list: name", &d.name)
        }),
        ServerMsg::Revoked { device } => check_device("revoked: device", device),
        ServerMsg::Joined {
            account,
            device,
            token,
        } => {
            check_account("joined: account", account)?;
            check_device("joined: device", device)?;
            if is_token(token) {
                Ok(())
            } else {
                Err("joined: token is not 64 lowercase hex digits".into())
            }
        }
        ServerMsg::Error { code, message } => {
            check_name("error: code", code)?;
            if message.len() > MAX_FRAME {
                return Err("error: message too long".into());
            }
            Ok(())
        }
    }
}
