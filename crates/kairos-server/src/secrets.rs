//! Credentials: random tokens, device ids and pairing codes from the OS
//! RNG, and the SHA-256 that is all the store keeps of tokens and codes.

use kairos_proto::ids;
use sha2::{Digest, Sha256};

/// `n` random bytes from the operating system.
fn random<const N: usize>() -> Result<[u8; N], std::io::Error> {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).map_err(std::io::Error::other)?;
    Ok(buf)
}

/// A new device token: 256 random bits as 64 lowercase hex digits.
pub fn new_token() -> Result<String, std::io::Error> {
    Ok(ids::hex(&random::<32>()?))
}

/// A new device id: `d_` and 64 random bits in hex.
pub fn new_device_id() -> Result<String, std::io::Error> {
    Ok(format!("d_{}", ids::hex(&random::<8>()?)))
}

/// A new instance id (`presence.rs`): `i_` and 64 random bits in hex.
pub fn new_instance_id() -> Result<String, std::io::Error> {
    Ok(format!("i_{}", ids::hex(&random::<8>()?)))
}

/// A new pairing code (60 random bits), grouped `XXXX-XXXX-XXXX`.
pub fn new_pairing_code() -> Result<String, std::io::Error> {
    Ok(ids::pairing_code(u64::from_le_bytes(random::<8>()?)))
}

/// What the store keeps of a token or a canonical pairing code.
pub fn sha256(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}
