//! Replays the committed fuzz corpus (`fuzz/corpus/decode/`) through the
//! same check the `decode` fuzz target runs (`kairos_proto::fuzzing`), so
//! every input stays tested by a plain `cargo test` on stable.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use kairos_proto::fuzzing::check_decode;
use kairos_proto::{decode_client, decode_server};

#[test]
fn every_decode_corpus_input_passes_the_target_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/decode");
    let mut inputs: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the fuzz corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 20,
        "fuzz/corpus/decode has {} files: the replay would test little",
        inputs.len()
    );
    let mut failures = Vec::new();
    for path in &inputs {
        let data = fs::read(path).unwrap();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        match catch_unwind(AssertUnwindSafe(|| check_decode(&data))) {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => failures.push(format!("{name}: {msg}")),
            Err(_) => failures.push(format!("{name}: panicked (message above)")),
        }
        // The seeds are valid messages: if they stopped decoding, the fuzzer
        // would start from nothing but rejects.
        if name.starts_with("seed-") {
            let text = String::from_utf8_lossy(&data);
            if decode_client(&text).is_err() && decode_server(&text).is_err() {
                failures.push(format!("{name}: a seed that neither decoder accepts"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
