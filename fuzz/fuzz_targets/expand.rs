//! An 8-byte query header (window, floating zone) then calendar text →
//! occurrences, alarms and next_alarm. The body is shared with the corpus replay.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = kairos_core::fuzzing::check_expand(data) {
        panic!("{e}");
    }
});
