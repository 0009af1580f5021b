//! The shapes of names: accounts, devices, tokens, pairing codes, and the
//! bounds on free text (`docs/sync-protocol.md`, "Names" and "Ops").

use crate::{MAX_ID_BYTES, MAX_NAME_BYTES};

/// Crockford's base32 alphabet (no I, L, O, U).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// An account id: 1–64 characters of `a-z 0-9 . _ -`.
#[must_use]
pub fn is_account(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// A device id: `d_` and 16 lowercase hex digits.
#[must_use]
pub fn is_device(s: &str) -> bool {
    s.len() == 18 && s.starts_with("d_") && is_lower_hex(&s[2..])
}

/// A token: 64 lowercase hex digits (256 bits).
#[must_use]
pub fn is_token(s: &str) -> bool {
    s.len() == 64 && is_lower_hex(s)
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Lowercase hex of `bytes` (tokens, device ids, hashes).
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The pairing code of 60 random bits: 12 Crockford base32 characters in
/// groups of four (`7KQ2-M9XA-P4RT`). Only the low 60 bits are used.
#[must_use]
pub fn pairing_code(bits: u64) -> String {
    let mut out = String::with_capacity(14);
    for i in 0..12 {
        if i == 4 || i == 8 {
            out.push('-');
        }
        let shift = 5 * (11 - i);
        // The index is masked to 5 bits, so it is inside the 32-entry table.
        let digit = usize::try_from((bits >> shift) & 31).unwrap_or(0);
        out.push(char::from(CROCKFORD[digit]));
    }
    out
}

/// A pairing code as typed by a person, in its canonical form (12
/// characters, upper case, no separators), or `None` if it cannot be one.
/// Hyphens and spaces are ignored; lower case is accepted; `I`/`L` read as
/// `1` and `O` as `0`, as Crockford's decoding says.
#[must_use]
pub fn normalize_pairing_code(typed: &str) -> Option<String> {
    let mut out = String::with_capacity(12);
    for c in typed.chars() {
        let c = match c.to_ascii_uppercase() {
            '-' | ' ' => continue,
            'I' | 'L' => '1',
            'O' => '0',
            c => c,
        };
        if !c.is_ascii() || !CROCKFORD.contains(&(c as u8)) || out.len() == 12 {
            return None;
        }
        out.push(c);
    }
    (out.len() == 12).then_some(out)
}

/// Checks an identifier (op id, calendar or series uid, reminder key):
/// non-empty, at most [`MAX_ID_BYTES`], no control characters.
///
/// # Errors
/// A message naming `what`.
pub fn check_id(what: &str, s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("{what} is empty"));
    }
    check_text(what, s, MAX_ID_BYTES)
}

/// Checks a display name (device, calendar, color, client): at most
/// [`MAX_NAME_BYTES`], no control characters. May be empty.
///
/// # Errors
/// A message naming `what`.
pub fn check_name(what: &str, s: &str) -> Result<(), String> {
    check_text(what, s, MAX_NAME_BYTES)
}

fn check_text(what: &str, s: &str, max: usize) -> Result<(), String> {
    if s.len() > max {
        return Err(format!("{what} is {} bytes, over {max}", s.len()));
    }
    if s.chars().any(char::is_control) {
        return Err(format!("{what} contains a control character"));
    }
    Ok(())
}

/// Checks a device id field.
///
/// # Errors
/// A message naming `what`.
pub fn check_device(what: &str, s: &str) -> Result<(), String> {
    if is_device(s) {
        Ok(())
    } else {
        Err(format!(
            "{what} {s:.40?} is not a device id (d_ and 16 lowercase hex digits)"
        ))
    }
}
