/**
 * The backend's `per_day` cap (crates/kairos-app/src/views.rs), for the fake:
 * at most `perDay` occurrences a day of the range, the rest counted per day.
 * An occurrence counts on its first day, or on `from`'s day when it began
 * earlier; all-day and multi-day ones are kept first, then by start, title
 * and identity.
 */
import type { ApiError, DayMore, OccurrenceView, Occurrences } from "../ipc/bindings";
import { addDays } from "../lib/dates";
import { MAX_PER_DAY } from "../lib/more";

/** The backend's refusal of a `per_day` outside 1–100, or `null` when it is fine. */
export function perDayError(perDay: number | null): ApiError | null {
  if (perDay === null || (Number.isInteger(perDay) && perDay >= 1 && perDay <= MAX_PER_DAY)) return null;
  return { kind: "invalid", message: `per_day: ${perDay} is not between 1 and ${MAX_PER_DAY}` };
}

interface Slot {
  day: string;
  long: boolean;
  o: OccurrenceView;
}

function slot(o: OccurrenceView, fromDay: string): Slot {
  const first = o.start.slice(0, 10);
  // Wall times are `YYYY-MM-DDTHH:MM:SS`: they compare as strings.
  const long = o.all_day || o.end > `${addDays(first, 1)}T00:00:00`;
  return { day: first < fromDay ? fromDay : first, long, o };
}

const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

function byRank(a: Slot, b: Slot): number {
  const x = a.o;
  const y = b.o;
  return (
    cmp(a.day, b.day) ||
    cmp(a.long ? 0 : 1, b.long ? 0 : 1) ||
    cmp(x.start, y.start) ||
    cmp(x.title, y.title) ||
    cmp(x.event.calendar_id, y.event.calendar_id) ||
    cmp(x.event.uid, y.event.uid) ||
    cmp(x.event.recurrence_id ?? "", y.event.recurrence_id ?? "")
  );
}

/** By start, then title (the backend's order of `items`). */
export function byStart(a: OccurrenceView, b: OccurrenceView): number {
  return cmp(a.start, b.start) || cmp(a.title, b.title);
}

/** `items` (any order) capped at `perDay` a day from `from` (wall time); `null` keeps all. */
export function capPerDay(items: readonly OccurrenceView[], perDay: number | null, from: string): Occurrences {
  if (perDay === null) return { items: [...items].sort(byStart), more: [] };
  const fromDay = from.slice(0, 10);
  const kept: OccurrenceView[] = [];
  const more: DayMore[] = [];
  let day = "";
  let seen = 0;
  for (const s of items.map((o) => slot(o, fromDay)).sort(byRank)) {
    seen = s.day === day ? seen + 1 : 1;
    day = s.day;
    if (seen <= perDay) {
      kept.push(s.o);
      continue;
    }
    const last = more[more.length - 1];
    if (last?.date === day) last.count++;
    else more.push({ date: day, count: 1 });
  }
  return { items: kept.sort(byStart), more };
}
