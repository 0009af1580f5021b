/**
 * The fake's ICS subscriptions, for the browser tests and screenshots
 * (the real ones are kairos-app's `Feeds`). A URL's path says how the
 * "server" answers: `/404` an HTTP error, `/html` a web page, `/slow` a
 * timeout, `/down` no server; anything else a feed with one event
 * tomorrow at 10:00 named after the file.
 */
import type { ApiError, CalendarInfo, ErrorKind, SubscribeRequest, SubscriptionView } from "../ipc/bindings";
import { addDays, nowWall, toDateStr } from "../lib/dates";
import { FAKE_ZONE, type StoredEvent } from "./seed";

/** The fake backend's data a subscription fills. */
export interface FakeData {
  calendars: Omit<CalendarInfo, "events">[];
  events: StoredEvent[];
}

const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** What fetching `url` would give: an error, or the feed's event title. */
export function fetchFeed(url: string): { error: ApiError } | { title: string } {
  const m = /^(https?|webcals?):\/\/([^/\s]+)(\/\S*)?$/i.exec(url.trim());
  if (!m) return { error: { kind: "feed_url", message: `"${url}" is not a feed URL: expected http://, https:// or webcal://` } };
  const path = m[3] ?? "/";
  const fail = (kind: ErrorKind, message: string): { error: ApiError } => ({ error: { kind, message } });
  if (path.startsWith("/404")) return fail("feed_http", "the server answered HTTP 404 Not Found");
  if (path.startsWith("/html")) return fail("feed_not_calendar", "the server sent a web page (HTML), not a calendar (Content-Type: text/html)");
  if (path.startsWith("/slow")) return fail("feed_timeout", "no complete answer within 60 s (timed out)");
  if (path.startsWith("/down")) return fail("feed_unreachable", "cannot connect: connection refused");
  const file = path.split("/").pop()?.replace(/\.ics$/, "") ?? "";
  return { title: file ? `${file[0]?.toUpperCase() ?? ""}${file.slice(1)}` : "Feed event" };
}

export class FakeFeeds {
  subs: SubscriptionView[] = [];

  /** The stored URL (`webcal://` as `https://`). */
  static normal(url: string): string {
    return url.trim().replace(/^webcals?:\/\//i, "https://");
  }

  /** `add_subscription`: "fetches" the feed; on success a calendar with its one event. */
  subscribe(r: SubscribeRequest, data: FakeData, newId: () => number): SubscriptionView {
    if (r.every_minutes < 5 || r.every_minutes > 10080) {
      throw { kind: "invalid", message: `interval: ${r.every_minutes} min is out of range (5 min to 7 days)` } satisfies ApiError;
    }
    const got = fetchFeed(r.url);
    if ("error" in got) throw got.error;
    const name = r.calendar.trim() || (/:\/\/([^/:]+)/.exec(r.url)?.[1] ?? "feed");
    let cal = data.calendars.find((c) => c.name === name);
    const id = cal?.id;
    if (id !== undefined && !this.subs.some((x) => x.calendar_id === id) && data.events.some((e) => e.draft.calendar_id === id)) {
      throw { kind: "feed_calendar_in_use", message: `calendar "${name}" already has events of its own; a subscription replaces a calendar's content: choose another --calendar` } satisfies ApiError;
    }
    if (!cal) {
      const color = ["#8338ec", "#f4a261", "#06d6a0", "#e63946"][this.subs.length % 4] ?? "#8338ec";
      cal = { id: newId(), name, color, visible: true, default_alarms: [], work_week: 31, holidays: false };
      data.calendars.push(cal);
    }
    const day = addDays(toDateStr(nowWall(FAKE_ZONE)), 1);
    const draft = { calendar_id: cal.id, title: got.title, all_day: false, start: `${day}T10:00`, end: `${day}T11:00`, tz: FAKE_ZONE, location: "", notes: "", rrule: null, alarms: [], task: null };
    data.events.push({ uid: `feed-${cal.id}`, exdates: [], draft });
    return this.add(r, cal.id, name);
  }

  /** `refresh_subscription`: fetches the stored URL again and records how it went. */
  refresh(id: number): SubscriptionView {
    const got = fetchFeed(this.get(id).url);
    return this.record(id, "error" in got ? got.error : null);
  }

  add(req: SubscribeRequest, calendarId: number, name: string, now = new Date()): SubscriptionView {
    const sub: SubscriptionView = {
      calendar_id: calendarId,
      calendar: name,
      url: FakeFeeds.normal(req.url),
      every_minutes: req.every_minutes,
      last_refresh: iso(now),
      last_ok: iso(now),
      last_error: null,
      next_refresh: iso(new Date(now.getTime() + req.every_minutes * 60_000)),
    };
    this.subs.push(sub);
    return sub;
  }

  /** Records a refresh of calendar `id` that ended with `error` (or went well). */
  record(id: number, error: ApiError | null, now = new Date()): SubscriptionView {
    const s = this.get(id);
    s.last_refresh = iso(now);
    if (error) s.last_error = { kind: error.kind, message: error.message };
    else {
      s.last_ok = iso(now);
      s.last_error = null;
    }
    return { ...s };
  }

  get(id: number): SubscriptionView {
    const s = this.subs.find((x) => x.calendar_id === id);
    if (!s) throw { kind: "not_found", message: `calendar ${id} is not subscribed to a feed` } satisfies ApiError;
    return s;
  }

  remove(id: number): void {
    this.get(id);
    this.subs = this.subs.filter((x) => x.calendar_id !== id);
  }
}
