//! Arbitrary bytes → `parse_calendar`; what parses must export and re-import
//! with the same number of events. The body is shared with the corpus replay.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = kairos_core::fuzzing::check_parse(data) {
        panic!("{e}");
    }
});
