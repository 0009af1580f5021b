/** The fake backend's starting data, laid out around "today" in its zone. */
import type { AlarmSpec, CalendarInfo, EventDraft, Settings, ShownReminder } from "../ipc/bindings";
import { addDays, nowWall, toDateStr } from "../lib/dates";

export interface StoredEvent {
  uid: string;
  draft: EventDraft;
  /** Occurrence starts (wall) taken out of a series. */
  exdates: string[];
}

export interface Seed {
  settings: Settings;
  calendars: Omit<CalendarInfo, "events">[];
  events: StoredEvent[];
  shown: ShownReminder[];
}

export const FAKE_ZONE = "Europe/Berlin";

export const ZONES = [
  "UTC", "Africa/Cairo", "Africa/Johannesburg", "America/Chicago", "America/Denver", "America/Los_Angeles",
  "America/New_York", "America/Sao_Paulo", "America/Toronto", "Asia/Dubai", "Asia/Hong_Kong", "Asia/Kolkata",
  "Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Asia/Taipei", "Asia/Tokyo", "Australia/Sydney",
  "Europe/Amsterdam", "Europe/Berlin", "Europe/Dublin", "Europe/Lisbon", "Europe/London", "Europe/Madrid",
  "Europe/Paris", "Europe/Rome", "Europe/Stockholm", "Europe/Zurich", "Pacific/Auckland", "Pacific/Honolulu",
];

const before = (minutes: number): AlarmSpec => ({ kind: "before", minutes, related: "start" });

function ev(uid: string, calendar_id: number, title: string, start: string, end: string, extra: Partial<EventDraft> = {}): StoredEvent {
  const all_day = start.length === 10;
  return {
    uid,
    exdates: [],
    draft: { calendar_id, title, all_day, start, end, tz: FAKE_ZONE, location: "", notes: "", rrule: null, alarms: [], task: null, ...extra },
  };
}

/** Data for a fake whose clock reads `now`. */
export function seed(now: Date = new Date(), settings: Partial<Settings> = {}): Seed {
  const today = toDateStr(nowWall(FAKE_ZONE, now));
  const d = (n: number): string => addDays(today, n);
  const agoIso = (minutes: number): string => new Date(now.getTime() - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    settings: {
      language: "auto",
      theme: "system",
      time_zone: null,
      week_start: 1,
      snooze_choices: [5, 10, 15, 30, 60, 1440],
      default_snooze: 10,
      quiet_hours: null,
      start_at_login: false,
      default_calendar: 1,
      ...settings,
    },
    calendars: [
      { id: 1, name: "Work", color: "#3a86ff", visible: true, default_alarms: [before(10)], work_week: 31, holidays: false },
      { id: 2, name: "Personal", color: "#2a9d8f", visible: true, default_alarms: [], work_week: 31, holidays: false },
      { id: 3, name: "Family", color: "#e76f51", visible: true, default_alarms: [before(1440)], work_week: 31, holidays: false },
    ],
    events: [
      ev("standup", 1, "Team standup", `${d(0)}T09:30`, `${d(0)}T09:45`, { rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", alarms: [before(5)] }),
      ev("design-review", 1, "Design review", `${d(0)}T14:00`, `${d(0)}T15:00`, { location: "Room 4", alarms: [before(15)] }),
      ev("lunch", 2, "Lunch with Mei", `${d(1)}T12:30`, `${d(1)}T13:30`, { location: "Noodle bar" }),
      ev("dentist", 2, "Dentist", `${d(2)}T10:00`, `${d(2)}T11:00`, { alarms: [before(60)] }),
      ev("conference", 1, "Conference", d(7), d(8), { location: "Lisbon" }),
      ev("yoga", 2, "Yoga", `${d(-1)}T18:00`, `${d(-1)}T19:00`, { rrule: "FREQ=WEEKLY" }),
      ev("birthday", 3, "Mum's birthday", d(12), d(12), { rrule: "FREQ=YEARLY", alarms: [before(1440)] }),
      ev("planning", 1, "Quarterly planning", `${d(-6)}T10:00`, `${d(-6)}T12:00`),
      // Tasks: `start` is the due time.
      ev("passport", 2, "Renew passport", `${d(3)}T17:00`, `${d(3)}T17:00`, { task: { done: false, priority: 1 }, alarms: [before(1440)] }),
      ev("rent", 2, "Pay rent", d(-2), d(-2), { task: { done: false, priority: null } }),
      ev("slides", 1, "Send slides", `${d(-3)}T12:00`, `${d(-3)}T12:00`, { task: { done: true, priority: 5 } }),
      ev("book", 2, "Read a book", d(5), d(5), { task: { done: false, priority: 9 } }),
    ],
    shown: [
      {
        key: "design-review/0",
        event: { calendar_id: 1, uid: "design-review", recurrence_id: null },
        title: "Design review",
        location: "Room 4",
        color: "#3a86ff",
        occurrence_start: `${d(0)}T14:00:00+01:00`,
        trigger: agoIso(3),
        missed: false,
      },
      {
        key: "yoga/1",
        event: { calendar_id: 2, uid: "yoga", recurrence_id: `${d(-1)}T18:00:00` },
        title: "Yoga",
        location: null,
        color: "#2a9d8f",
        occurrence_start: `${d(-1)}T18:00:00+01:00`,
        trigger: agoIso(20 * 60),
        missed: true,
      },
    ],
  };
}
