//! An edit in the app that leaves the times as they were keeps every
//! reminder's key: an imported event's first edit must not make its
//! delivered reminders new ones (and so send them again).

use kairos_app::api::{ImportIcs, SaveEvent, Scope};

use super::{app, t};

#[test]
fn editing_the_text_of_an_imported_event_keeps_its_keys_uid_and_escalation_rule() {
    let (mut app, dir, _) = app("UTC", "2026-06-01T08:00:00Z");
    let file = dir.path().join("e.ics");
    std::fs::write(
        &file,
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:pill\r\n\
         SUMMARY:Pill\r\nDTSTART:20260601T200000Z\r\nBEGIN:VALARM\r\nUID:alarm-1\r\n\
         ACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-PT10M\r\n\
         X-KAIROS-ESCALATE:v=1;every=PT5M;max=3\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .expect("write");
    let now = t("2026-06-01T08:00:00Z");
    let r = app
        .import_ics(
            &ImportIcs {
                path: file.to_string_lossy().into_owned(),
                calendar: "Home".into(),
            },
            now,
        )
        .expect("import");
    let keys = |app: &mut kairos_app::App| -> Vec<String> {
        let mut k: Vec<String> = app
            .store()
            .due(t("2027-01-01T00:00:00Z"), 100)
            .expect("due")
            .into_iter()
            .map(|i| i.key)
            .collect();
        k.sort();
        k
    };
    let before = keys(&mut app);
    assert_eq!(
        before.len(),
        4,
        "the reminder and 3 repetitions: {before:?}"
    );
    let ev = kairos_app::api::EventRef {
        calendar_id: r.calendar_id,
        uid: "pill".into(),
        recurrence_id: None,
    };
    let mut d = app.get_event(&ev).expect("get").draft;
    d.title = "Take the pill".into();
    app.save_event(
        SaveEvent {
            event: Some(ev),
            scope: Scope::All,
            draft: d,
        },
        now,
    )
    .expect("save");
    assert_eq!(keys(&mut app), before, "same reminders, same keys");
    let stored: String = app
        .store()
        .events_of(kairos_store::CalendarId(r.calendar_id))
        .expect("events")
        .iter()
        .map(|e| kairos_engine::series::component_text(e, "keys").expect("text"))
        .collect();
    assert!(
        stored.contains("X-KAIROS-ESCALATE:v=1;every=PT5M;max=3"),
        "{stored}"
    );
    assert!(stored.contains("UID:alarm-1"), "{stored}");
}

#[test]
fn a_reminder_set_to_ring_again_is_stored_as_an_escalation_and_read_back() {
    use kairos_app::api::{Again, AlarmSpec, Related};
    let (mut app, _dir, _) = app("UTC", "2026-06-01T08:00:00Z");
    let now = t("2026-06-01T08:00:00Z");
    let c = super::cal(&app);
    let again = AlarmSpec::Before {
        minutes: 0,
        related: Related::Start,
        again: Some(Again {
            every_minutes: 5,
            max: 3,
        }),
    };
    let mut d = super::draft(c, "Pill", "2026-06-01T20:00", "2026-06-01T20:05", "UTC");
    d.alarms = vec![again.clone()];
    let r = super::create(&mut app, d.clone(), "2026-06-01T08:00:00Z");
    assert_eq!(app.get_event(&r).expect("get").draft.alarms, [again]);
    let keys: Vec<String> = app
        .store()
        .due(t("2027-01-01T00:00:00Z"), 100)
        .expect("due")
        .into_iter()
        .map(|i| i.key)
        .collect();
    assert_eq!(keys.len(), 4, "the reminder and 3 repetitions: {keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("~again@3")), "{keys:?}");
    for (every, max) in [(0, 3), (1441, 3), (5, 0), (5, 101)] {
        d.alarms = vec![AlarmSpec::Before {
            minutes: 0,
            related: Related::Start,
            again: Some(Again {
                every_minutes: every,
                max,
            }),
        }];
        let err = app
            .save_event(
                SaveEvent {
                    event: None,
                    scope: Scope::All,
                    draft: d.clone(),
                },
                now,
            )
            .expect_err("out of range");
        assert!(
            err.message.starts_with("reminder: again every"),
            "{}",
            err.message
        );
    }
}
