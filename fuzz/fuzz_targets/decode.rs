//! Arbitrary bytes → `decode_client` and `decode_server`: never a panic, and
//! what decodes re-encodes to the same message. The body is shared with the
//! corpus replay in kairos-proto's tests.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = kairos_proto::fuzzing::check_decode(data) {
        panic!("{e}");
    }
});
