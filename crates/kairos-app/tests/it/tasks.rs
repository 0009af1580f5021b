//! Tasks in the desktop: created in the editor (due time, priority,
//! reminders counted from the due time), listed due soonest, shown on their
//! due day in the views, ticked off (reminders stop), reopened.

use kairos_app::api::{
    AlarmSpec, EventDraft, ImportIcs, RangeQuery, Related, SaveEvent, Scope, TaskMark,
};
use kairos_store::State;

use super::{app, cal, create, draft, t};

fn task(cal: i64, title: &str, due: &str, priority: Option<u8>) -> EventDraft {
    EventDraft {
        task: Some(TaskMark {
            done: false,
            priority,
        }),
        alarms: vec![AlarmSpec::Before {
            minutes: 60,
            related: Related::Start,
            again: None,
        }],
        ..draft(cal, title, due, due, "Europe/Berlin")
    }
}

#[test]
fn a_task_from_the_editor_is_listed_shown_on_its_due_day_and_done_stops_its_reminder() {
    let (mut app, _dir, _) = app("Europe/Berlin", "2026-03-09T08:00:00Z");
    let c = cal(&app);
    let now = "2026-03-09T08:00:00Z";
    let contract = create(
        &mut app,
        task(c, "Renew contract", "2026-03-10T12:00", Some(1)),
        now,
    );
    let later = create(
        &mut app,
        task(c, "File taxes", "2026-03-20T09:00", None),
        now,
    );
    create(
        &mut app,
        draft(
            c,
            "Meeting",
            "2026-03-10T09:00",
            "2026-03-10T10:00",
            "Europe/Berlin",
        ),
        now,
    );

    // Stored as a VTODO due at 12:00 Berlin, reminded an hour before DUE.
    let detail = app.get_event(&contract).expect("get");
    assert_eq!(detail.draft.start, "2026-03-10T12:00");
    assert_eq!(
        detail.draft.task,
        Some(TaskMark {
            done: false,
            priority: Some(1)
        })
    );
    assert_eq!(
        detail.draft.alarms,
        [AlarmSpec::Before {
            minutes: 60,
            related: Related::End,
            again: None,
        }],
        "a task's reminder counts from DUE"
    );
    let pending = app
        .store()
        .due(t("2027-01-01T00:00:00Z"), 10)
        .expect("due")
        .into_iter()
        .filter(|i| i.event_uid == contract.uid)
        .collect::<Vec<_>>();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].trigger_at, t("2026-03-10T10:00:00Z"));

    let list = app.list_tasks(t(now)).expect("tasks");
    let titles: Vec<&str> = list.iter().map(|x| x.title.as_str()).collect();
    assert_eq!(titles, ["Renew contract", "File taxes"]);
    assert_eq!(list[0].due.as_deref(), Some("2026-03-10T12:00"));
    assert_eq!(list[0].priority, Some(1));
    assert!(!list[0].overdue);
    assert_eq!(list[1].event, later);

    let day = app
        .occurrences(&RangeQuery {
            from: "2026-03-10T00:00".into(),
            to: "2026-03-11T00:00".into(),
            per_day: None,
        })
        .expect("day");
    let shown: Vec<(&str, &str, bool)> = day
        .items
        .iter()
        .map(|o| (o.title.as_str(), o.start.as_str(), o.task.is_some()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Meeting", "2026-03-10T09:00:00", false),
            ("Renew contract", "2026-03-10T12:00:00", true)
        ]
    );

    // Ticked off while its reminder shows: acknowledged, off the list.
    let key = pending[0].key.clone();
    let at = t("2026-03-10T10:00:00Z");
    assert!(
        app.store()
            .transition(&key, &[State::Pending], State::Firing, "due", at)
            .expect("t")
    );
    assert!(
        app.store()
            .transition(&key, &[State::Firing], State::Delivered, "shown", at)
            .expect("t")
    );
    app.complete_task(&contract, t("2026-03-10T10:05:00Z"))
        .expect("done");
    assert_eq!(
        app.store().get(&key).expect("get").expect("kept").state,
        State::Acknowledged
    );
    let list = app.list_tasks(t("2026-03-10T10:05:00Z")).expect("tasks");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].title, "File taxes");
    let err = app
        .complete_task(&contract, t("2026-03-10T10:06:00Z"))
        .expect_err("twice");
    assert!(err.message.contains("already done"), "{}", err.message);
    // The view still shows it, done.
    let day = app
        .occurrences(&RangeQuery {
            from: "2026-03-10T00:00".into(),
            to: "2026-03-11T00:00".into(),
            per_day: None,
        })
        .expect("day");
    let mark = day
        .items
        .iter()
        .find(|o| o.title == "Renew contract")
        .and_then(|o| o.task.clone());
    assert_eq!(mark.map(|m| m.done), Some(true));

    // Reopened in the editor: back on the list.
    let mut d = app.get_event(&contract).expect("get").draft;
    d.task = Some(TaskMark {
        done: false,
        priority: Some(2),
    });
    app.save_event(
        SaveEvent {
            event: Some(contract),
            scope: Scope::All,
            draft: d,
        },
        t("2026-03-10T10:07:00Z"),
    )
    .expect("reopen");
    let list = app.list_tasks(t("2026-03-10T10:07:00Z")).expect("tasks");
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].title, "Renew contract");
    assert_eq!(list[0].priority, Some(2));
    assert!(!list[0].overdue, "due 11:00 UTC, it is 10:07");
}

#[test]
fn an_imported_recurring_task_is_completed_one_occurrence_at_a_time() {
    let (mut app, dir, _) = app("UTC", "2026-06-02T08:00:00Z");
    let file = dir.path().join("t.ics");
    std::fs::write(
        &file,
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VTODO\r\nUID:pill\r\n\
         SUMMARY:Pill\r\nDUE;VALUE=DATE:20260601\r\nRRULE:FREQ=DAILY;COUNT=3\r\nEND:VTODO\r\n\
         END:VCALENDAR\r\n",
    )
    .expect("write");
    app.import_ics(
        &ImportIcs {
            path: file.to_string_lossy().into_owned(),
            calendar: "Home".into(),
        },
        t("2026-06-02T08:00:00Z"),
    )
    .expect("import");
    let now = t("2026-06-02T08:00:00Z");
    let list = app.list_tasks(now).expect("tasks");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].due.as_deref(), Some("2026-06-01"));
    assert!(list[0].overdue, "due yesterday");
    let first = list[0].event.clone();
    assert_eq!(first.recurrence_id.as_deref(), Some("2026-06-01"));
    // Only the current occurrence can be ticked off from the list.
    let mut other = first.clone();
    other.recurrence_id = Some("2026-06-03".into());
    let err = app.complete_task(&other, now).expect_err("not current");
    assert!(
        err.message.contains("not the one to do next"),
        "{}",
        err.message
    );
    app.complete_task(&first, now).expect("done");
    let list = app.list_tasks(now).expect("tasks");
    assert_eq!(list[0].due.as_deref(), Some("2026-06-02"));
    assert!(!list[0].overdue, "due today is not overdue");
}
