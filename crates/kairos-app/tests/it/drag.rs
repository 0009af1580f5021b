//! A drag across a DST change that only one of the two zones makes.

use kairos_app::api::{MoveEvent, RangeQuery, Scope};

use crate::{app, cal, create, draft, t};

/// New York ends summer time a week after Berlin (2026-11-01 vs 10-25). An
/// event kept in New York, seen in Berlin at 16:00 on Saturday 24 October,
/// dragged one week on: it must show at 16:00 on the 31st, where it was
/// dropped (11:00 in New York), not at 15:00 (10:00 New York + 7 days).
#[test]
fn a_drag_lands_where_it_was_dropped_in_the_display_zone() {
    let (mut a, _d, _) = app("Europe/Berlin", "2026-10-20T08:00:00Z");
    let c = cal(&a);
    let r = create(
        &mut a,
        draft(
            c,
            "Call NY",
            "2026-10-24T10:00",
            "2026-10-24T11:00",
            "America/New_York",
        ),
        "2026-10-20T08:00:00Z",
    );
    let week = 7 * 24 * 60;
    a.move_event(
        &MoveEvent {
            event: r.clone(),
            scope: Scope::All,
            start_delta_minutes: week,
            end_delta_minutes: week + 30,
        },
        t("2026-10-20T09:00:00Z"),
    )
    .expect("move");
    let range: RangeQuery = serde_json::from_value(
        serde_json::json!({"from": "2026-10-31T00:00", "to": "2026-11-01T00:00"}),
    )
    .expect("range");
    let shown = serde_json::to_value(a.occurrences(&range).expect("occurrences")).expect("json");
    let text = shown.to_string();
    assert!(
        text.contains("\"start\":\"2026-10-31T16:00:00\""),
        "shown at 16:00 Berlin: {text}"
    );
    assert!(
        text.contains("\"end\":\"2026-10-31T17:30:00\""),
        "resized by 30 min: {text}"
    );
    // Stored in its own zone: 11:00 New York.
    let d = a.get_event(&r).expect("event").draft;
    assert_eq!(
        (d.start.as_str(), d.tz.as_str()),
        ("2026-10-31T11:00", "America/New_York")
    );
}
