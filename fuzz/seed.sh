#!/usr/bin/env bash
# Rebuilds the seed inputs of both targets from seeds/*.ics into corpus/.
# parse/ gets each file as it is; expand/ gets it behind two 8-byte query
# headers (see kairos_core::fuzzing::expand_query): 2025-01-01 for two years
# in a zone chosen by the file's position, and 2000-01-01 for twenty years in
# Europe/Berlin. Run `cargo fuzz cmin` afterwards to drop redundant inputs.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/parse corpus/expand
i=0
for f in seeds/*.ics; do
    name=$(basename "$f" .ics)
    cp "$f" "corpus/parse/seed-$name"
    zone=$(printf '\\x%02x' $((i % 8)))
    { printf "\x03\xeb\x2f\x00\x00\x44\x87$zone"; cat "$f"; } > "corpus/expand/seed-$name-2025"
    { printf '\x03\x22\x87\x80\x02\xae\x3e\x01'; cat "$f"; } > "corpus/expand/seed-$name-2000"
    i=$((i + 1))
done
