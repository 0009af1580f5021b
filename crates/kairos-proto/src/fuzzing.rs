//! The body of the `decode` fuzz target in `fuzz/`, shared with the corpus
//! replay in `tests/it/corpus.rs`, so `make test` checks every committed
//! input exactly as the fuzzer did. Not part of the API: hidden from the
//! docs, may change.

use crate::{decode_client, decode_server, encode};

/// Arbitrary bytes through both decoders: no panic; whatever decodes
/// encodes to a frame that decodes to the same message (the decoders accept
/// their own output).
///
/// # Errors
/// A message naming the broken round trip.
pub fn check_decode(data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else {
        // A WebSocket text frame is UTF-8; tungstenite refuses anything else
        // before we see it. Still feed the lossy text through the decoders.
        let lossy = String::from_utf8_lossy(data);
        let _ = decode_client(&lossy);
        let _ = decode_server(&lossy);
        return Ok(());
    };
    if let Ok(msg) = decode_client(text) {
        let again = encode(&msg);
        match decode_client(&again) {
            Ok(back) if back == msg => {}
            Ok(back) => return Err(format!("client round trip changed {msg:?} into {back:?}")),
            Err(e) => return Err(format!("our encoding {again:?} does not decode: {e}")),
        }
    }
    if let Ok(msg) = decode_server(text) {
        let again = encode(&msg);
        match decode_server(&again) {
            Ok(back) if back == msg => {}
            Ok(back) => return Err(format!("server round trip changed {msg:?} into {back:?}")),
            Err(e) => return Err(format!("our encoding {again:?} does not decode: {e}")),
        }
    }
    Ok(())
}
