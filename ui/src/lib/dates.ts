/**
 * Wall-time helpers. The backend speaks wall times (`YYYY-MM-DDTHH:MM[:SS]`,
 * no offset) and dates (`YYYY-MM-DD`); the UI holds them as `Date`s whose UTC
 * fields ARE the wall time ("wall dates"), which is what FullCalendar sees
 * with `timeZone: 'UTC'`. No function here converts between zones, except
 * `nowWall`/`formatInstant`, which ask Intl for a zone's wall clock.
 */

const WALL_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/** A wall time or date string as a wall date; `null` when malformed. */
export function parseWall(s: string): Date | null {
  const m = WALL_RE.exec(s.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  const t = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, se ?? 0);
  const dt = new Date(t);
  // Reject 2026-02-31 and the like (Date.UTC rolls them over).
  return dt.getUTCDate() === d && dt.getUTCMonth() === (mo ?? 1) - 1 ? dt : null;
}

/** `YYYY-MM-DD` of a wall date. */
export function toDateStr(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** `YYYY-MM-DDTHH:MM` of a wall date (the editor's inputs). */
export function toMinuteStr(d: Date): string {
  return `${toDateStr(d)}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/** `YYYY-MM-DDTHH:MM:SS` of a wall date (range queries). */
export function toWallStr(d: Date): string {
  return `${toMinuteStr(d)}:${pad(d.getUTCSeconds())}`;
}

/** `s` (date or wall time) shifted by whole days, same form back. */
export function addDays(s: string, days: number): string {
  const d = parseWall(s);
  if (!d) return s;
  const out = new Date(d.getTime() + days * 86_400_000);
  return s.length <= 10 ? toDateStr(out) : toMinuteStr(out);
}

/** A wall time shifted by minutes, `YYYY-MM-DDTHH:MM` back. */
export function addMinutes(s: string, minutes: number): string {
  const d = parseWall(s);
  return d ? toMinuteStr(new Date(d.getTime() + minutes * 60_000)) : s;
}

/** Whole minutes from `a` to `b` (wall dates or strings). */
export function minutesBetween(a: Date | string, b: Date | string): number {
  const da = typeof a === "string" ? parseWall(a) : a;
  const db = typeof b === "string" ? parseWall(b) : b;
  if (!da || !db) return 0;
  return Math.round((db.getTime() - da.getTime()) / 60_000);
}

const WEEKDAYS = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"] as const;
export type WeekdayCode = (typeof WEEKDAYS)[number];

/** RFC 5545 weekday code (`MO`…) of a date or wall time. */
export function weekdayCode(s: string): WeekdayCode {
  const d = parseWall(s) ?? new Date(0);
  return WEEKDAYS[d.getUTCDay()] ?? "MO";
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayIndex(code: string): number {
  return WEEKDAYS.indexOf(code as WeekdayCode);
}

/**
 * Which weekday-of-the-month the date is, as an RRULE BYDAY ordinal:
 * 1–4 for the first to fourth, -1 for a fifth (which is always the last).
 */
export function weekdayOrdinal(s: string): number {
  const d = parseWall(s) ?? new Date(0);
  const n = Math.ceil(d.getUTCDate() / 7);
  return n >= 5 ? -1 : n;
}

/** Whether the date's weekday is the last of its kind in the month. */
export function isLastWeekdayOfMonth(s: string): boolean {
  const d = parseWall(s) ?? new Date(0);
  const next = new Date(d.getTime() + 7 * 86_400_000);
  return next.getUTCMonth() !== d.getUTCMonth();
}

/** The current wall time in `tz` as a wall date (FullCalendar's `now`). */
export function nowWall(tz: string | null, now: Date = new Date()): Date {
  if (!tz) {
    return new Date(
      Date.UTC(now.getFullYear(), now.getMonth(), now.getDate(), now.getHours(), now.getMinutes(), now.getSeconds()),
    );
  }
  try {
    const parts = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    }).formatToParts(now);
    const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
    return new Date(Date.UTC(get("year"), get("month") - 1, get("day"), get("hour") % 24, get("minute"), get("second")));
  } catch {
    return nowWall(null, now);
  }
}

/** Shows a wall time or date for people, in `locale` (no zone change). */
export function formatWall(s: string, locale: string, withWeekday = false): string {
  const d = parseWall(s);
  if (!d) return s;
  const dateOpts: Intl.DateTimeFormatOptions = {
    timeZone: "UTC",
    month: "short",
    day: "numeric",
    ...(withWeekday ? { weekday: "short" } : {}),
  };
  if (s.length <= 10) return d.toLocaleDateString(locale, dateOpts);
  return d.toLocaleString(locale, { ...dateOpts, hour: "numeric", minute: "2-digit" });
}

/** Shows an instant (RFC 3339) as a wall time in `tz`; a bare date as a date. */
export function formatInstant(s: string, tz: string | null, locale: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return formatWall(s, locale, true);
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return s;
  const opts: Intl.DateTimeFormatOptions = {
    weekday: "short",
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
  };
  try {
    return d.toLocaleString(locale, tz ? { ...opts, timeZone: tz } : opts);
  } catch {
    return d.toLocaleString(locale, opts);
  }
}

/**
 * An instant as a time of day in `tz` (the status bar's "synced 14:05"),
 * with a short weekday when it is not on `now`'s day there: `HH:MM` where
 * the locale counts 24 hours (`09:05` in en-GB and zh-CN), `9:05 AM` where
 * it counts 12.
 */
export function formatClock(s: string, tz: string | null, locale: string, now: Date = new Date()): string {
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return s;
  const sameDay = toDateStr(nowWall(tz, d)) === toDateStr(nowWall(tz, now));
  const h12 = /h1[12]/.test(new Intl.DateTimeFormat(locale, { hour: "numeric" }).resolvedOptions().hourCycle ?? "");
  const opts: Intl.DateTimeFormatOptions = { hour: h12 ? "numeric" : "2-digit", minute: "2-digit", ...(sameDay ? {} : { weekday: "short" }) };
  try {
    return d.toLocaleString(locale, tz ? { ...opts, timeZone: tz } : opts);
  } catch {
    return d.toLocaleString(locale, opts);
  }
}

/** The last day of an all-day span from its exclusive end (at least `start`). */
export function lastDayOf(start: string, exclusiveEnd: string): string {
  const last = addDays(exclusiveEnd.slice(0, 10), -1);
  return last < start.slice(0, 10) ? start.slice(0, 10) : last;
}
