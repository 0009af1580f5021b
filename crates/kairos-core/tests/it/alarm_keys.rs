//! RFC 9074 alarm identity: naming an alarm and adding a snooze alarm
//! keep its reminder keys.

use crate::support::{cal, t};

/// RFC 9074: naming an alarm (Kairos gives a `UID` to one that had none)
/// and adding a snooze alarm for it keep every reminder key as it was, and
/// the snooze alarm adds none.
#[test]
fn naming_an_alarm_and_adding_its_snooze_alarm_keep_the_reminder_keys() {
    use kairos_core::model::{Alarm, Trigger, alarm_key, kairos_alarm_uid};
    let keys = |c: &kairos_core::model::Calendar| -> Vec<String> {
        kairos_core::alarms::alarms(
            c,
            t("2026-03-01T00:00:00Z"),
            t("2026-03-10T00:00:00Z"),
            chrono_tz::UTC,
            &kairos_core::Limits::default(),
        )
        .expect("alarms")
        .iter()
        .map(|h| h.key("Work").to_string())
        .collect()
    };
    let before = cal(&crate::support::wrap(
        "BEGIN:VEVENT\r\nUID:s1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260302T100000Z\r\n\
         RRULE:FREQ=DAILY;COUNT=3\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:a\r\n\
         TRIGGER:-PT15M\r\nEND:VALARM\r\nBEGIN:VALARM\r\nUID:theirs\r\nACTION:DISPLAY\r\n\
         DESCRIPTION:b\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\n",
    ));
    let want = keys(&before);
    assert_eq!(want.len(), 6, "{want:?}");
    let mut after = before.clone();
    let alarms = &mut after.events[0].alarms;
    alarms[0].uid = Some(kairos_alarm_uid("s1", 0));
    alarms[0].acknowledged = Some(t("2026-03-02T09:46:00Z"));
    let snooze = Alarm {
        uid: Some("snz".to_owned()),
        trigger: Trigger::Absolute(t("2026-03-02T09:55:00Z")),
        snooze_of: alarms[0].uid.clone(),
        acknowledged: None,
        ..alarms[0].clone()
    };
    alarms.push(snooze);
    assert_eq!(keys(&after), want, "same keys, none for the snooze alarm");
    // The key rule: a UID Kairos gave keeps `#index`, only at that index.
    assert_eq!(alarm_key(Some(&kairos_alarm_uid("s1", 0)), 0), "#0");
    assert_eq!(
        alarm_key(Some(&kairos_alarm_uid("s1", 0)), 1),
        "kairos-alarm-0.s1"
    );
    assert_eq!(alarm_key(Some("theirs"), 1), "theirs");
    assert_eq!(alarm_key(None, 2), "#2");
    // And it survives export and re-reading.
    let text = kairos_core::ics::write_calendar(&after, t("2026-03-01T00:00:00Z"));
    assert_eq!(keys(&cal(&text)), want, "{text}");
}
