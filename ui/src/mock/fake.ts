/**
 * An in-memory stand-in for the Rust commands, for the browser tests and
 * screenshots (loaded only by test/mock/entry.ts, never by the app). It
 * keeps a log of every call and can be told to fail the next call of a
 * command. Validation mimics the backend's "field: message" errors.
 */
import type {
  ApiError, AppStatus, CalendarInfo, CalendarInput, DeleteEvent, EventDetail, EventDraft, EventRef, ExportIcs, ImportIcs, LostEdit,
  MoveEvent, OccurrenceView, Occurrences, RangeQuery, SaveEvent, Settings, ShownReminder, SnoozeRequest, SyncStatus,
  TaskItem,
} from "../ipc/bindings";
import { FakeCaldav, discover } from "./caldav";
import { FakeFeeds } from "./feeds";
import { FakeSync } from "./sync";
import { addDays, addMinutes, nowWall, parseWall, toMinuteStr } from "../lib/dates";
import { capPerDay, perDayError } from "./per-day";
import { minutesOf, occStart, ruleMatches, shiftSeries, wallSecs } from "./rules";
import { FAKE_ZONE, seed, ZONES, type StoredEvent } from "./seed";

export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

const invalid = (message: string): ApiError => ({ kind: "invalid", message });
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

export { ruleMatches } from "./rules";

export class FakeBackend {
  settings: Settings;
  calendars: Omit<CalendarInfo, "events">[];
  events: StoredEvent[];
  shown: ShownReminder[];
  pausedUntil: string | null = null;
  /** What `app_status` says of sync (a test changes it and emits `kairos://sync-changed`). */
  sync: SyncStatus = { state: "synced", last_sync_at: new Date(Date.now() - 4 * 60_000).toISOString(), since: null, reason: null, waiting: 0 };
  /** ICS subscriptions. */
  readonly feeds = new FakeFeeds();
  /** CalDAV accounts. */
  readonly caldav = new FakeCaldav();
  /** Commands whose answer waits until a test calls `release()` (a slow network). */
  held = new Set<string>();
  private waiting: (() => void)[] = [];
  /** Settings → Sync's account and devices. */
  readonly accounts = new FakeSync();
  readonly calls: Call[] = [];
  /** Edits that lost to another device's later edit, by event uid (`get_event`'s `history`). */
  history: Record<string, LostEdit[]> = {
    "design-review": [
      { at: new Date(Date.now() - 26 * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z"), lost: "d_4f1c2a9b0e7d3c5a", won: "d_9e8d7c6b5a4f3e2d", lost_here: true, won_here: false },
    ],
  };
  /** What the "shell" does when the UI says it listens (`ui_ready`). */
  onReady: (() => null) | null = null;
  private failures = new Map<string, ApiError>();
  private nextId = 100;

  constructor(settings: Partial<Settings> = {}, now = new Date()) {
    const s = seed(now, settings);
    this.settings = s.settings;
    this.calendars = s.calendars;
    this.events = s.events;
    this.shown = s.shown;
  }

  /** The next call of `cmd` rejects with `error`. */
  failNext(cmd: string, error: ApiError): void {
    this.failures.set(cmd, error);
  }

  /** Answers held commands (see `held`). */
  release(): void {
    this.waiting.splice(0).forEach((go) => go());
  }

  /** Answers one IPC call (what `mockIPC` hands over). */
  handle(cmd: string, args: Record<string, unknown> = {}): unknown {
    this.calls.push({ cmd, args: clone(args) });
    if (this.held.delete(cmd)) {
      return new Promise((ok, no) => this.waiting.push(() => {
        try {
          ok(this.answer(cmd, args));
        } catch (e) {
          no(e);
        }
      }));
    }
    return this.answer(cmd, args);
  }

  private answer(cmd: string, args: Record<string, unknown>): unknown {
    const failure = this.failures.get(cmd);
    if (failure) {
      this.failures.delete(cmd);
      throw failure;
    }
    // Each command reads its own argument; the types come from the callee.
    const a = <T>(k: string): T => args[k] as T;
    switch (cmd) {
      case "app_status": return this.status();
      case "get_settings": return clone(this.settings);
      case "save_settings": return this.saveSettings(a("settings"));
      case "list_calendars": return this.listCalendars();
      case "save_calendar": return this.saveCalendar(a("input"));
      case "delete_calendar": return this.deleteCalendar(a("id"));
      case "occurrences": return this.occurrences(a("range"));
      case "new_draft": return this.newDraft(a("calendar_id"), a("start"));
      case "get_event": return this.getEvent(a("event"));
      case "save_event": return this.saveEvent(a("request"));
      case "move_event": return this.moveEvent(a("request"));
      case "delete_event": return this.deleteEvent(a("request"));
      case "import_ics": return this.importIcs(a("request"));
      case "export_ics": return this.exportIcs(a("request"));
      case "shown_reminders": return clone(this.shown);
      case "snooze": return this.snooze(a("request"));
      case "dismiss": return this.dismiss(a("key"));
      case "dismiss_here": return this.dismiss(a("key"));
      case "dismiss_all": return this.dismissAll();
      case "pause_reminders": return this.pause(a("pause"));
      case "time_zones": return [...ZONES];
      case "list_tasks": return this.listTasks();
      case "complete_task": return this.completeTask(a("event"));
      case "ui_ready": return this.onReady?.() ?? null;
      case "sync_account":
      case "sync_join":
      case "sync_pair":
      case "sync_devices":
      case "sync_revoke":
      case "sync_leave": {
        const out = this.accounts.handle(cmd, args);
        this.sync = this.accounts.account.paired
          ? { ...this.sync, state: this.sync.state === "off" ? "synced" : this.sync.state }
          : { state: "off", last_sync_at: null, since: null, reason: null, waiting: 0 };
        return out;
      }
      case "list_subscriptions": return clone(this.feeds.subs);
      case "add_subscription": return this.feeds.subscribe(a("request"), this, () => this.nextId++);
      case "refresh_subscription": return this.feeds.refresh(a("calendar_id"));
      case "remove_subscription": return (this.feeds.remove(a("calendar_id")), null);
      case "caldav_discover": return discover(a("request"));
      case "add_caldav_account": return this.caldav.add(a("request"), this.calendars, () => this.nextId++);
      case "list_caldav_accounts": return clone(this.caldav.accounts);
      case "sync_caldav_account": return this.caldav.sync(a("id"));
      case "remove_caldav_account": return (this.caldav.remove(a("id")), null);
      case "edit_caldav_account": return this.caldav.edit(a("request"), this.calendars, () => this.nextId++);
      case "refresh_caldav_account": return this.caldav.refresh(a("id"));
      case "plugin:dialog|open": return "/home/me/holidays.ics";
      case "plugin:dialog|save": return "/home/me/export.ics";
      default: throw { kind: "internal", message: `no command ${cmd}` } satisfies ApiError;
    }
  }

  status(): AppStatus {
    return {
      version: "0.1.0",
      time_zone: this.settings.time_zone ?? FAKE_ZONE,
      system_time_zone: FAKE_ZONE,
      database: "/home/me/.local/share/kairos/kairos.db",
      notifier: "actions",
      paused_until: this.pausedUntil,
      next: [{ key: "dentist/0", title: "Dentist", trigger: new Date(Date.now() + 3 * 3600_000).toISOString() }],
      shown: this.shown.length,
      sync: clone(this.sync),
    };
  }

  private saveSettings(s: Settings): Settings {
    if (s.snooze_choices.length < 1 || s.snooze_choices.length > 12) throw invalid("snooze choices: 1 to 12 are needed");
    for (const m of s.snooze_choices) if (m < 1 || m > 10080) throw invalid(`snooze: ${m} minutes is not between 1 and 10080`);
    this.settings = clone(s);
    return clone(s);
  }

  private listCalendars(): CalendarInfo[] {
    return this.calendars.map((c) => ({ ...clone(c), events: this.events.filter((e) => e.draft.calendar_id === c.id).length }));
  }

  private saveCalendar(input: CalendarInput): CalendarInfo {
    const name = input.name.trim();
    if (!name || name.length > 200) throw invalid("name: 1–200 characters are needed");
    if (!/^#[0-9a-f]{6}$/i.test(input.color)) throw invalid(`colour: "${input.color}" is not #rrggbb`);
    if (this.calendars.some((c) => c.name === name && c.id !== input.id)) throw invalid(`name: a calendar called "${name}" exists already`);
    if (input.work_week < 1 || input.work_week > 127) throw invalid(`working week: ${input.work_week} names no weekday (at least one is needed)`);
    const cal = { id: input.id ?? this.nextId++, name, color: input.color, visible: input.visible, default_alarms: clone(input.default_alarms), work_week: input.work_week, holidays: input.holidays };
    const i = this.calendars.findIndex((c) => c.id === cal.id);
    if (i >= 0) this.calendars[i] = cal;
    else this.calendars.push(cal);
    return { ...cal, events: 0 };
  }

  private deleteCalendar(id: number): null {
    if (this.calendars.length <= 1) throw invalid("the last calendar cannot be deleted");
    this.calendars = this.calendars.filter((c) => c.id !== id);
    this.events = this.events.filter((e) => e.draft.calendar_id !== id);
    return null;
  }

  private occurrences(q: RangeQuery): Occurrences {
    // Sent by the generated wrapper as given; an older caller may leave it out.
    const perDay = q.per_day ?? null;
    const bad = perDayError(perDay);
    if (bad) throw bad;
    const from = q.from.slice(0, 10);
    const to = q.to.slice(0, 10);
    const out: OccurrenceView[] = [];
    for (const e of this.events) {
      const cal = this.calendars.find((c) => c.id === e.draft.calendar_id);
      if (!cal?.visible) continue;
      const d = e.draft;
      const spanDays = Math.round(((parseWall(d.end)?.getTime() ?? 0) - (parseWall(d.start)?.getTime() ?? 0)) / 86_400_000);
      const starts: string[] = [];
      if (!d.rrule) starts.push(d.start);
      else
        for (let day = addDays(from, -14); day < to; day = addDays(day, 1))
          if (ruleMatches(d.rrule, d.start, day)) starts.push(d.all_day ? day : `${day}${d.start.slice(10)}`);
      for (const s of starts) {
        if (e.exdates.includes(s) || s.slice(0, 10) >= to) continue;
        const end = d.all_day ? addDays(s, spanDays + 1) : addMinutes(s, minutesOf(d));
        if (end.slice(0, 10) < from) continue;
        out.push({
          event: { calendar_id: cal.id, uid: e.uid, recurrence_id: d.rrule ? wallSecs(s) : null },
          title: d.title || "(no title)",
          start: d.all_day ? s : wallSecs(s),
          end: d.all_day ? end : wallSecs(end),
          all_day: d.all_day,
          color: cal.color,
          location: d.location || null,
          recurring: d.rrule !== null,
          has_alarms: d.alarms.length > 0,
          task: d.task ? clone(d.task) : null,
        });
      }
    }
    return capPerDay(out, perDay, q.from);
  }

  private newDraft(calendar_id: number, start: string): EventDraft {
    const cal = this.calendars.find((c) => c.id === calendar_id);
    if (!cal) throw { kind: "not_found", message: `calendar ${calendar_id}` } satisfies ApiError;
    const all_day = start.length === 10;
    return {
      calendar_id, title: "", all_day, start: start.slice(0, 16), end: all_day ? start : addMinutes(start, 60),
      tz: this.status().time_zone, location: "", notes: "", rrule: null, alarms: clone(cal.default_alarms), task: null,
    };
  }

  private find(ref: EventRef): StoredEvent {
    const e = this.events.find((x) => x.uid === ref.uid && x.draft.calendar_id === ref.calendar_id);
    if (!e) throw { kind: "not_found", message: `event ${ref.uid}` } satisfies ApiError;
    return e;
  }

  private getEvent(ref: EventRef): EventDetail {
    const e = this.find(ref);
    const draft = clone(e.draft);
    if (ref.recurrence_id) {
      const s = draft.all_day ? ref.recurrence_id.slice(0, 10) : ref.recurrence_id.slice(0, 16);
      const shift = Math.round(((parseWall(s)?.getTime() ?? 0) - (parseWall(draft.start)?.getTime() ?? 0)) / 60_000);
      draft.end = draft.all_day ? addDays(draft.end, shift / 1440) : addMinutes(draft.end, shift);
      draft.start = s;
    }
    return { event: clone(ref), draft, recurring: e.draft.rrule !== null, history: clone(this.history[ref.uid] ?? []) };
  }

  private validate(d: EventDraft): void {
    if (d.title.length > 1000) throw invalid("title: longer than 1000 characters");
    if (!parseWall(d.start)) throw invalid(`start: "${d.start}" is not a wall time YYYY-MM-DDTHH:MM`);
    if (!d.task && !parseWall(d.end)) throw invalid(`end: "${d.end}" is not a wall time YYYY-MM-DDTHH:MM`);
    if (!d.task && d.end < d.start) throw invalid(d.all_day ? "end: the last day is before the first" : "end: before the start");
    if (!d.all_day && !ZONES.includes(d.tz)) throw invalid(`time zone: "${d.tz}" is not an IANA time zone (e.g. Europe/Berlin)`);
    if (d.rrule !== null && !/^FREQ=(DAILY|WEEKLY|MONTHLY|YEARLY)(;[A-Z]+=[A-Z0-9,+-]+)*$/.test(d.rrule))
      throw invalid(`recurrence: "${d.rrule}" is not an RRULE value (e.g. FREQ=WEEKLY;BYDAY=MO)`);
    if (d.alarms.length > 20) throw invalid("reminders: more than 20");
    for (const a of d.alarms)
      if (a.again && (a.again.every_minutes < 1 || a.again.every_minutes > 1440 || a.again.max < 1 || a.again.max > 100))
        throw invalid(`reminder: again every ${a.again.every_minutes} minutes, ${a.again.max} times: between 1 and 1440 minutes, 1 and 100 times`);
  }

  private saveEvent(r: SaveEvent): EventRef {
    this.writable(r.draft.calendar_id);
    if (r.event) this.writable(r.event.calendar_id);
    this.validate(r.draft);
    if (!r.event) {
      const uid = `fake-${this.nextId++}`;
      this.events.push({ uid, draft: clone(r.draft), exdates: [] });
      return { calendar_id: r.draft.calendar_id, uid, recurrence_id: null };
    }
    const e = this.find(r.event);
    if (r.scope === "this" && r.event.recurrence_id) {
      e.exdates.push(occStart(e, r.event.recurrence_id));
      const uid = `fake-${this.nextId++}`;
      this.events.push({ uid, draft: { ...clone(r.draft), rrule: null }, exdates: [] });
      return { calendar_id: r.draft.calendar_id, uid, recurrence_id: null };
    }
    const keepStart = r.event.recurrence_id ? shiftSeries(e.draft, r.draft, r.event.recurrence_id) : r.draft;
    e.draft = clone(keepStart);
    return clone(r.event);
  }

  private moveEvent(r: MoveEvent): null {
    this.writable(r.event.calendar_id);
    const { draft } = this.getEvent(r.event);
    const mv = (s: string, m: number): string => (draft.all_day ? addDays(s, Math.round(m / 1440)) : addMinutes(s, m));
    draft.start = mv(draft.start, r.start_delta_minutes);
    draft.end = mv(draft.end, r.end_delta_minutes);
    this.saveEvent({ event: r.event, scope: r.scope, draft });
    return null;
  }

  private deleteEvent(r: DeleteEvent): null {
    this.writable(r.event.calendar_id);
    const e = this.find(r.event);
    if (r.scope === "this" && r.event.recurrence_id) e.exdates.push(occStart(e, r.event.recurrence_id));
    else this.events = this.events.filter((x) => x !== e);
    return null;
  }

  private importIcs(r: ImportIcs): { calendar_id: number; events: number; changed: number; scheduled: number; warnings: string[] } {
    if (!r.calendar.trim()) throw invalid("calendar: a name of 1–200 characters is needed");
    let cal = this.calendars.find((c) => c.name === r.calendar.trim());
    if (!cal) {
      cal = { id: this.nextId++, name: r.calendar.trim(), color: "#8338ec", visible: true, default_alarms: [], work_week: 31, holidays: false };
      this.calendars.push(cal);
    }
    // A calendar called "Messy" stands for a file with problems.
    const warnings =
      cal.name === "Messy"
        ? [
            "line 14 (VEVENT uid bad@x): VEVENT has no DTSTART: event skipped",
            "line 30 (VALARM uid a@x): VALARM has no TRIGGER: alarm skipped",
          ]
        : [];
    return { calendar_id: cal.id, events: 3, changed: 3, scheduled: 1, warnings };
  }

  /** As the backend: a subscribed calendar's events are read-only. */
  private writable(id: number): void {
    const s = this.feeds.subs.find((x) => x.calendar_id === id);
    if (s) throw invalid(`calendar "${s.calendar}" is a subscription: its events are read-only (the next refresh would replace a change); unsubscribe to edit them`);
  }

  private exportIcs(r: ExportIcs): number {
    return this.events.filter((e) => r.calendar_id === null || e.draft.calendar_id === r.calendar_id).length;
  }

  private snooze(r: SnoozeRequest): null {
    if (r.minutes < 1 || r.minutes > 10080) throw invalid(`snooze: ${r.minutes} minutes is not between 1 and 10080`);
    this.shown = this.shown.filter((s) => s.key !== r.key);
    return null;
  }

  private dismiss(key: string): null {
    this.shown = this.shown.filter((s) => s.key !== key);
    return null;
  }

  private dismissAll(): number {
    const n = this.shown.length;
    this.shown = [];
    return n;
  }

  /** Open single tasks of visible calendars, due soonest (undated last), then by priority. */
  private listTasks(): TaskItem[] {
    const now = toMinuteStr(nowWall(this.status().time_zone));
    const items: TaskItem[] = [];
    for (const e of this.events) {
      const cal = this.calendars.find((c) => c.id === e.draft.calendar_id);
      const d = e.draft;
      if (!cal?.visible || !d.task || d.task.done) continue;
      const overdue = d.all_day ? d.start < now.slice(0, 10) : d.start < now;
      items.push({ event: { calendar_id: cal.id, uid: e.uid, recurrence_id: null }, title: d.title || "(no title)", due: d.start, priority: d.task.priority, overdue, color: cal.color });
    }
    const prio = (x: TaskItem): number => x.priority ?? 10;
    return items.sort((a, b) => (a.due ?? "~").localeCompare(b.due ?? "~") || prio(a) - prio(b));
  }

  private completeTask(ref: EventRef): null {
    const e = this.find(ref);
    if (!e.draft.task) throw { kind: "not_found", message: `no task with UID "${ref.uid}"` } satisfies ApiError;
    if (e.draft.task.done) throw invalid(`task "${ref.uid}" is already done`);
    e.draft.task.done = true;
    return null;
  }

  private pause(p: string): AppStatus {
    this.pausedUntil = p === "off" ? null : new Date(Date.now() + (p === "hour" ? 3600_000 : 12 * 3600_000)).toISOString();
    return this.status();
  }
}
