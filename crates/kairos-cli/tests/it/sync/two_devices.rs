//! Two devices (two databases, their daemons) and one real server.

use super::{
    Device, Server, calendar, in_secs, lines, next_line, pair_of, until_line, wait_connected,
};

fn key_of(d: &Device, uid: &str) -> String {
    d.upcoming()
        .into_iter()
        .find(|(k, _)| k.contains(&format!("/{uid}/")))
        .map(|(k, _)| k)
        .unwrap_or_else(|| panic!("{uid} has no pending reminder on {}", d.id))
}

#[test]
fn an_import_on_one_device_fires_on_the_other_with_the_same_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    assert_ne!(a.id, b.id);
    let bd = b.daemon();
    wait_connected(&b);
    a.import(&calendar(&[("standup", &in_secs(3))]));
    let key = key_of(&a, "standup");
    let (fired, _) = until_line(&bd, 20, "B fires standup", |v| v["key"].is_string());
    assert_eq!(fired["key"], key.as_str(), "same key on both devices");
    assert_eq!(fired["summary"], "standup");
    // Both devices are at the same place of the account's log.
    assert_eq!(a.status()["outbox"], 0);
}

#[test]
fn a_dismiss_before_the_fire_keeps_the_other_device_quiet_and_after_it_withdraws() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let bd = b.daemon();
    wait_connected(&b);
    // `early` fires on B and is dismissed on A afterwards; `quiet` is
    // dismissed on A before its time; `sentinel` fires after `quiet`'s time.
    a.import(&calendar(&[
        ("early", &in_secs(2)),
        ("quiet", &in_secs(6)),
        ("sentinel", &in_secs(8)),
    ]));
    let (early, quiet) = (key_of(&a, "early"), key_of(&a, "quiet"));
    b.wait_upcoming("B has quiet", |u| u.iter().any(|(k, _)| *k == quiet));
    a.run(&["dismiss", &quiet]);
    let (fired, _) = until_line(&bd, 20, "B fires early", |v| v["key"].is_string());
    assert_eq!(fired["key"], early.as_str());
    a.run(&["dismiss", &early]);
    let (w, _) = until_line(&bd, 20, "B withdraws early", |v| v["withdrawn"].is_string());
    assert_eq!(w["withdrawn"], early.as_str());
    assert_eq!(w["by"], a.id.as_str());
    assert_eq!(w["reason"], "dismissed");
    let (s, seen) = until_line(&bd, 20, "B fires the sentinel", |v| {
        v["key"].as_str().is_some_and(|k| k.contains("/sentinel/"))
    });
    assert!(s["key"].is_string());
    assert!(
        !seen.iter().any(|v| v["key"] == quiet.as_str()),
        "quiet was dismissed on A before its time, yet B fired it: {seen:?}"
    );
    let why = String::from_utf8_lossy(&b.run(&["why", &quiet]).stdout).into_owned();
    assert!(why.contains(&format!("dismissed by {}", a.id)), "{why}");
}

#[test]
fn a_snooze_on_one_device_fires_once_on_both_at_the_new_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let (ad, bd) = (a.daemon(), b.daemon());
    wait_connected(&a);
    wait_connected(&b);
    a.import(&calendar(&[("call", &in_secs(2))]));
    let key = key_of(&a, "call");
    let (fa, _) = until_line(&ad, 20, "A fires", |v| v["key"].is_string());
    let (fb, _) = until_line(&bd, 20, "B fires", |v| v["key"].is_string());
    assert_eq!(fa["key"], key.as_str());
    assert_eq!(fb["key"], key.as_str());
    let snoozed = lines(&a.run(&["snooze", &key, "3s"]))[0]["key"]
        .as_str()
        .expect("new key")
        .to_owned();
    assert!(snoozed.starts_with(&format!("{key}~snooze@")), "{snoozed}");
    let (w, _) = until_line(&bd, 20, "B withdraws the snoozed one", |v| {
        v["withdrawn"].is_string()
    });
    assert_eq!(w["withdrawn"], key.as_str());
    assert_eq!(w["reason"], "snoozed");
    let (again_b, _) = until_line(&bd, 20, "B fires the snooze", |v| v["key"].is_string());
    let (again_a, _) = until_line(&ad, 20, "A fires the snooze", |v| v["key"].is_string());
    assert_eq!(again_a["key"], snoozed.as_str());
    assert_eq!(again_b["key"], snoozed.as_str());
    // Once each: nothing else comes.
    assert!(next_line(&bd, 2).is_none());
    assert!(next_line(&ad, 0).is_none());
}

#[test]
fn dismiss_here_stays_on_this_device() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let bd = b.daemon();
    wait_connected(&b);
    a.import(&calendar(&[("local", &in_secs(3))]));
    let key = key_of(&a, "local");
    b.wait_upcoming("B has it", |u| u.iter().any(|(k, _)| *k == key));
    let out = a.run(&["dismiss", "--here", &key]);
    assert_eq!(lines(&out)[0]["here_only"], true);
    assert!(a.upcoming().iter().all(|(k, _)| *k != key), "gone on A");
    let (fired, _) = until_line(&bd, 20, "B still fires it", |v| v["key"].is_string());
    assert_eq!(fired["key"], key.as_str());
    assert_eq!(a.status()["outbox"], 0, "nothing was queued for the others");
}

#[test]
fn an_event_deleted_on_one_device_takes_back_its_notification_on_the_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let bd = b.daemon();
    wait_connected(&b);
    a.import(&calendar(&[("gone", &in_secs(2)), ("kept", &in_secs(2))]));
    let gone = key_of(&a, "gone");
    let (_, _) = until_line(&bd, 20, "B fires gone", |v| v["key"] == gone.as_str());
    a.run(&["delete", "gone", "--calendar", "default"]);
    let (w, seen) = until_line(&bd, 20, "B takes gone back", |v| v["withdrawn"].is_string());
    assert_eq!(w["withdrawn"], gone.as_str());
    assert_eq!(w["reason"], "deleted");
    assert!(
        !seen.iter().any(|v| v["withdrawn"].is_string()),
        "only the deleted event's reminder: {seen:?}"
    );
}

#[test]
fn an_edit_and_a_delete_travel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let t1 = in_secs(3600);
    let t2 = in_secs(7200);
    a.import(&calendar(&[("moved", &t1), ("gone", &t1)]));
    b.run(&["sync", "now"]);
    let before = b.upcoming();
    assert_eq!(before.len(), 2, "{before:?}");
    // Moved by an hour on A: B drops the old reminder, has the new one.
    a.import(&calendar(&[("moved", &t2), ("gone", &t1)]));
    a.run(&["delete", "gone", "--calendar", "default"]);
    let out = b.run(&["sync", "now"]);
    assert!(lines(&out)[0]["pulled"].as_u64().expect("pulled") >= 2);
    assert_eq!(
        b.upcoming(),
        a.upcoming(),
        "the same reminders, the same keys"
    );
    let left = b.upcoming();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].0.contains("/moved/"));
    assert_ne!(
        left[0].1,
        before
            .iter()
            .find(|(k, _)| k.contains("/moved/"))
            .expect("was")
            .1
    );
}

#[test]
fn concurrent_offline_edits_converge_and_the_loser_is_logged_whatever_the_clocks_say() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("server"), "127.0.0.1:0");
    let a = Device::join(dir.path(), "a", &server, &server.invite("alice"));
    // B's clock is 5 minutes ahead.
    let b = Device::join_ahead(dir.path(), "b", &server, &a.pair(), 300);
    let t = in_secs(3600);
    a.import(&calendar(&[("meeting", &t)]));
    b.run(&["sync", "now"]);
    // Offline: the server goes away; both edit the same event.
    let addr = server.addr();
    server.kill9();
    a.import(&calendar(&[("meeting", &in_secs(5400))]));
    b.import(&calendar(&[("meeting", &in_secs(7200))]));
    let server = Server::start(&dir.path().join("server"), &addr);
    for d in [&a, &b, &a] {
        d.run(&["sync", "now"]);
    }
    assert_eq!(a.upcoming(), b.upcoming(), "converged");
    // B's stamp is larger (its clock is ahead): B's version won.
    let won = a.upcoming();
    assert_eq!(won.len(), 1);
    for d in [&a, &b] {
        let log = String::from_utf8_lossy(&d.run(&["log"]).stdout).into_owned();
        assert!(
            log.contains(&format!("edit from {} lost to {}", a.id, b.id)),
            "{}: {log}",
            d.id
        );
    }
    // A edits again *after* seeing B's edit: A's edit wins though B's clock
    // is ahead (causality, not wall clocks), and it is no conflict.
    a.import(&calendar(&[("meeting", &in_secs(9000))]));
    b.run(&["sync", "now"]);
    assert_eq!(a.upcoming(), b.upcoming());
    assert_ne!(a.upcoming(), won, "A's later edit is what both have");
    let log = String::from_utf8_lossy(&b.run(&["log"]).stdout).into_owned();
    assert_eq!(log.matches("lost to").count(), 1, "{log}");
    drop(server);
}
