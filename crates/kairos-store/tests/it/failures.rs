//! Each way SQLite can refuse, classified, with nothing stored lost and
//! nothing refused modified.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use kairos_store::{ErrorKind, Options, Store, StoreError};

use crate::support::{bytes, inst, quick, raw, store_with_calendar, t, temp_db};

#[test]
fn a_database_from_a_newer_kairos_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    store
        .put_event(cal, "e", "", "BEGIN:VEVENT", 1, t(0))
        .unwrap();
    drop(store);
    raw(&path).pragma_update(None, "user_version", 99).unwrap();
    let before = bytes(&path);

    for options in [
        Options::default(),
        Options {
            read_only: true,
            ..Options::default()
        },
    ] {
        let err = Store::open_with(&path, &options).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Schema, "{err}");
        assert!(!err.is_retryable());
        let msg = err.to_string();
        assert!(
            msg.contains("99") && msg.contains("Upgrade Kairos"),
            "{msg}"
        );
    }
    assert_eq!(
        bytes(&path),
        before,
        "the file must be byte for byte as it was"
    );
}

#[test]
fn random_bytes_are_refused_as_corrupt_and_left_untouched() {
    let (_dir, path) = temp_db();
    // xorshift: deterministic noise, 8 KiB, not starting "SQLite format 3".
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(&path, &noise).unwrap();

    let err = Store::open(&path).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert!(err.to_string().contains("Nothing was written"), "{err}");
    assert_eq!(bytes(&path), noise);
}

#[test]
fn another_programs_database_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    raw(&path)
        .execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada');")
        .unwrap();
    let before = bytes(&path);

    let err = Store::open(&path).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert!(matches!(err, StoreError::NotKairos { .. }), "{err}");
    assert_eq!(bytes(&path), before);
}

// Unix file modes (Windows has no mode bits; its read-only attribute is
// a different mechanism, not what this test is about).
#[cfg(unix)]
#[test]
fn a_read_only_database_refuses_writes_and_loses_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    store
        .insert_instances(&[inst(cal, "e", "o1", t(10))], t(0))
        .unwrap();
    drop(store);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = bytes(&path);

    // Tests run as root, and root may write a 0444 file, so the mode alone
    // would not make SQLite refuse anything. Opening with
    // SQLITE_OPEN_READ_ONLY (Options::read_only, which also sets
    // `PRAGMA query_only`) gives the genuine SQLITE_READONLY error a
    // non-root user would get from a write-protected file.
    let mut ro = Store::open_with(
        &path,
        &Options {
            read_only: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(ro.due(t(10), 10).unwrap().len(), 1, "reads still work");
    let err = ro
        .insert_instances(&[inst(cal, "e", "o2", t(20))], t(1))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReadOnly, "{err}");
    assert!(err.to_string().contains("chmod u+w"), "{err}");
    let err = ro
        .transition(
            "work/e/o1/#0",
            &[kairos_store::State::Pending],
            kairos_store::State::Firing,
            "due",
            t(10),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReadOnly, "{err}");
    drop(ro);

    assert_eq!(bytes(&path), before);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = Store::open(&path).unwrap();
    let due = store.due(t(60), 10).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].state, kairos_store::State::Pending);
}

#[test]
fn a_read_only_open_of_an_old_schema_asks_for_an_upgrade() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"").unwrap(); // an empty file is an empty database
    let err = Store::open_with(
        &path,
        &Options {
            read_only: true,
            ..Options::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(err.kind(), ErrorKind::Schema, "{err}");
    assert!(err.to_string().contains("read-write once"), "{err}");
    assert_eq!(bytes(&path), b"");
}

#[test]
fn a_full_database_rolls_back_and_keeps_earlier_data() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    store
        .put_event(cal, "kept", "", "BEGIN:VEVENT", 1, t(0))
        .unwrap();
    drop(store);

    // A cap below the current size is raised to it: no page may be added.
    let mut store = Store::open_with(
        &path,
        &Options {
            max_pages: Some(1),
            ..Options::default()
        },
    )
    .unwrap();
    let big = "X".repeat(64 * 1024);
    let err = store
        .write(|tx| {
            tx.put_event(cal, "small", "", "BEGIN:VEVENT", 1, t(1))?;
            tx.put_event(cal, "big", "", &big, 1, t(1))
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Full, "{err}");
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("rolled back"), "{err}");

    let uids: Vec<String> = store
        .events_of(cal)
        .unwrap()
        .into_iter()
        .map(|e| e.uid)
        .collect();
    assert_eq!(
        uids,
        ["kept"],
        "the whole transaction rolled back, earlier data intact"
    );
    drop(store);
    assert_eq!(Store::open(&path).unwrap().events_of(cal).unwrap().len(), 1);
}

#[test]
fn a_held_write_lock_gives_busy_after_the_timeout() {
    let (_dir, path) = temp_db();
    let (_, cal) = store_with_calendar(&path);
    let mut holder = Store::open(&path).unwrap();
    let mut waiter = Store::open_with(&path, &quick(150)).unwrap();

    let (locked_tx, locked_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let h = std::thread::spawn(move || {
        holder
            .write(|tx| {
                tx.put_event(cal, "holder", "", "BEGIN:VEVENT", 1, t(0))?;
                locked_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                Ok::<_, StoreError>(())
            })
            .unwrap();
    });
    locked_rx.recv().unwrap();

    // WAL: readers are not blocked by the writer, and do not see its work.
    assert!(waiter.events_of(cal).unwrap().is_empty());
    let started = Instant::now();
    let err = waiter
        .put_event(cal, "waiter", "", "BEGIN:VEVENT", 1, t(0))
        .unwrap_err();
    assert!(
        started.elapsed() >= Duration::from_millis(140),
        "gave up early"
    );
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    assert!(err.is_retryable());
    assert!(err.to_string().contains("150 ms"), "{err}");

    release_tx.send(()).unwrap();
    h.join().unwrap();
    assert!(
        waiter
            .put_event(cal, "waiter", "", "BEGIN:VEVENT", 1, t(0))
            .unwrap()
    );
    assert_eq!(waiter.events_of(cal).unwrap().len(), 2);
}

#[derive(Debug)]
enum AppError {
    Store(StoreError),
    Refused,
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        AppError::Store(e)
    }
}

#[test]
fn an_error_in_the_closure_rolls_the_transaction_back() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let res: Result<(), AppError> = store.write(|tx| {
        tx.put_event(cal, "e", "", "BEGIN:VEVENT", 1, t(0))?;
        tx.insert_instances(&[inst(cal, "e", "o1", t(10))], t(0))?;
        Err(AppError::Refused)
    });
    assert!(matches!(res, Err(AppError::Refused)));
    assert!(store.events_of(cal).unwrap().is_empty());
    assert!(store.get("work/e/o1/#0").unwrap().is_none());
    assert!(store.audit_of("work/e/o1/#0").unwrap().is_empty());
    // The store's own errors convert into the caller's type.
    let res: Result<(), AppError> = store.write(|tx| {
        tx.put_event(kairos_store::CalendarId(42), "e", "", "x", 1, t(0))?;
        Ok(())
    });
    assert!(matches!(res, Err(AppError::Store(e)) if e.kind() == ErrorKind::NotFound));
}
