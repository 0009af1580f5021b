//! The stored form against every event the core's test corpora and the
//! fuzzer's committed inputs hold: it reads back as the same event, it is
//! what the old text path read back (so reminder keys and peers agree), and
//! the text written from it is byte for byte what rows used to hold (so the
//! wire and CalDAV hashes do not change).

use std::path::{Path, PathBuf};

use kairos_core::Limits;
use kairos_core::model::{Event, RawProperty};

use super::{encode, from_wire, has_custom_zone, ics_block, settle, typed};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_none_or(|x| x != "expected" && x != "md") {
            out.push(p);
        }
    }
}

/// Every event that lenient reading keeps, from every corpus file.
fn corpus_events() -> Vec<(PathBuf, Event)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = Vec::new();
    for dir in [
        "crates/kairos-core/tests/corpus-real",
        "crates/kairos-core/tests/data",
        "fuzz/corpus/parse",
    ] {
        files(&root.join(dir), &mut paths);
    }
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let bytes = std::fs::read(&p).expect("read corpus file");
        if let Ok((cal, _)) = kairos_core::ics::parse_calendar_lenient(&bytes, &Limits::default()) {
            out.extend(cal.events.into_iter().map(|e| (p.clone(), e)));
        }
    }
    out
}

/// The three properties for one event (`at` names it).
fn check(ev: &Event, at: &str) {
    // The form holds the core's model as it is, custom zones included.
    let back = typed::from_stored(&encode(ev)).unwrap_or_else(|m| panic!("{at}: {m}"));
    assert_eq!(&back, ev, "{at}: typed round trip");

    // What the write path stores is what the old path read back from the
    // text it stored: the same event, so the same reminder keys, and what
    // a peer reads from the wire.
    let old_text = ics_block(ev);
    let old_read = from_wire(&old_text).unwrap_or_else(|e| panic!("{at}: {e}"));
    assert_eq!(old_read.len(), 1, "{at}");
    let stored = settle(ev.clone());
    if stored != old_read[0] {
        // The one ambiguity: the writer's fixed DTSTAMP where the event's
        // own would be written anyway (nothing between UID and the end).
        // The same text and keys either way.
        let unstamped = |e: &Event| {
            let mut e = e.clone();
            e.extra.retain(|x| x.line != "DTSTAMP:19700101T000000Z");
            e
        };
        assert_eq!(
            unstamped(&stored),
            unstamped(&old_read[0]),
            "{at}: stored form differs"
        );
        assert_eq!(ics_block(&old_read[0]), old_text, "{at}: text changed");
    }

    // The text written from the stored form is the old row's, byte for
    // byte.
    assert_eq!(ics_block(&stored), old_text, "{at}: text changed");
}

#[test]
fn every_corpus_event_survives_the_stored_form_and_matches_the_old_text_path() {
    let events = corpus_events();
    assert!(events.len() > 500, "corpus too small: {}", events.len());
    let mut custom = 0;
    for (path, ev) in &events {
        let at = format!("{} uid {:?}", path.display(), ev.uid);
        check(ev, &at);
        custom += usize::from(has_custom_zone(ev));
        // As the app's editor makes them: the writer's fixed DTSTAMP kept
        // as the event's own first property.
        if !ev.extra.iter().any(|x| x.line.starts_with("DTSTAMP")) {
            let mut stamped = ev.clone();
            stamped.extra.insert(
                0,
                RawProperty {
                    line: "DTSTAMP:19700101T000000Z".into(),
                },
            );
            check(&stamped, &format!("{at} (stamped)"));
        }
    }
    assert!(
        custom > 0,
        "no custom zone in the corpus: the test lost a case"
    );
}

#[test]
fn a_stored_form_of_another_version_is_refused_by_name() {
    let ev = &corpus_events()[0].1;
    let body = encode(ev);
    let newer = body.replacen("{\"v\":1,", "{\"v\":2,", 1);
    let e = typed::from_stored(&newer).expect_err("v2");
    assert!(e.contains("version 2") && e.contains("newer"), "{e}");
    let unknown = body.replacen("{\"v\":1,", "{\"v\":1,\"colour\":\"red\",", 1);
    let e = typed::from_stored(&unknown).expect_err("unknown field");
    assert!(e.contains("colour"), "{e}");
    for bad in [
        "",
        "{}",
        "BEGIN:VEVENT",
        "{\"v\":1,",
        "{\"v\":1,\"uid\":\"x\"}",
        "null",
    ] {
        assert!(typed::from_stored(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn a_damaged_value_is_named_not_guessed() {
    let ev = &corpus_events()[0].1;
    let body = encode(ev);
    let Some(i) = body.find("\"start\":") else {
        panic!("no start in {body}");
    };
    let mut broken = body.clone();
    broken.insert(i + "\"start\":".len() + 10, 'x');
    let e = typed::from_stored(&broken).expect_err("damaged start");
    assert!(e.contains("start") || e.contains("stored form"), "{e}");
}
