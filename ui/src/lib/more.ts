/**
 * The month grid's "+N more" when the backend sends only a few occurrences a
 * day (`per_day`) and counts the rest (`Occurrences.more`): how many to ask
 * for, and the true number a day's link stands for.
 */
import type { DayMore } from "../ipc/bindings";

/**
 * The fewest occurrences a day the month grid asks for. A cell shows 2–3 and
 * "+N more"; a dense calendar (≈135 a day) would otherwise send thousands,
 * and WebKit's memory grows with every one FullCalendar holds.
 */
export const MONTH_PER_DAY = 6;

/** The backend's upper bound on `per_day`. */
export const MAX_PER_DAY = 100;

/**
 * Height of one event row in a month cell, CSS px: 21 measured in Chromium
 * with calendar.css, taken a little low so a cell's room is over-estimated.
 */
export const MONTH_ROW_PX = 20;

/**
 * How many occurrences a day to ask for when the month grid (always six
 * weeks) is `gridHeight` px tall: at least MONTH_PER_DAY, and always one more
 * than a cell can show. FullCalendar (`dayMaxEvents: true`) draws "+N more"
 * only when it has more events than fit, so a day the backend cut must bring
 * more than fit, or its hidden occurrences would go unmentioned (on a
 * 1440-px-high window a cell shows 8).
 */
export function monthPerDay(gridHeight: number): number {
  const fit = Math.floor(Math.max(0, gridHeight) / 6 / MONTH_ROW_PX);
  return Math.min(MAX_PER_DAY, Math.max(MONTH_PER_DAY, fit + 1));
}

/** The backend's left-out counts by date (`YYYY-MM-DD`). */
export function moreByDate(more: readonly DayMore[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of more) out.set(m.date, (out.get(m.date) ?? 0) + m.count);
  return out;
}

/**
 * What a day's "+N more" stands for: the events FullCalendar hid in the cell
 * plus the occurrences the backend left out of that day.
 */
export function moreTotal(hiddenByCalendar: number, date: string | undefined, server: ReadonlyMap<string, number>): number {
  return hiddenByCalendar + (date === undefined ? 0 : (server.get(date) ?? 0));
}
