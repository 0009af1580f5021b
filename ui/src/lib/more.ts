/**
 * The month grid's "+N more" when the backend sends only a few occurrences a
 * day (`per_day`) and counts the rest (`Occurrences.more`): how many to ask
 * for, and the true number a day's link stands for.
 */
import type { DayMore } from "../ipc/bindings";

/**
 * What the month grid asks for before its cells are laid out (the
 * container's height is 0): enough for any ordinary window. A dense
 * calendar (≈135 a day) would otherwise send thousands.
 */
export const MONTH_PER_DAY = 6;

/** The backend's upper bound on `per_day`. */
export const MAX_PER_DAY = 100;

/**
 * Height of one event row in a month cell, CSS px (21 measured in WebKit and
 * Chromium with calendar.css).
 */
export const MONTH_ROW_PX = 21;

/**
 * What a month cell spends on other things than event rows, CSS px, taken a
 * little low: the day number (≈ 32 measured in WebKit) and the cell's share
 * of the weekday header row (≈ 36 / 6). Only for the first ask, before the
 * cells exist; `monthPerDayIn` measures them afterwards.
 */
export const MONTH_CELL_CHROME_PX = 35;

/**
 * One more than a cell of `room` px shows in rows of `row` px, within the
 * backend's 1–100. FullCalendar (`dayMaxEvents: true`) draws "+N more" only
 * when it has more events than fit, so a day the backend cut must bring more
 * than fit, or its left-out occurrences would go unmentioned. Every
 * occurrence beyond that is drawn hidden and still costs WebKit memory
 * (≈ 75 KB each, docs/benchmarks.md), so no more is asked for.
 */
export function perDayFor(room: number, row: number): number {
  const fit = Math.floor(Math.max(0, room) / Math.max(1, row));
  return Math.min(MAX_PER_DAY, fit + 1);
}

/**
 * How many occurrences a day to ask for when the month grid (always six
 * weeks, header row included) is `gridHeight` px tall and its cells are not
 * drawn yet: an estimate (on a 1440-px-high window a cell shows 8), or
 * MONTH_PER_DAY when nothing is laid out.
 */
export function monthPerDay(gridHeight: number): number {
  if (gridHeight <= 0) return MONTH_PER_DAY;
  return perDayFor(gridHeight / 6 - MONTH_CELL_CHROME_PX, MONTH_ROW_PX);
}

/**
 * The same from the drawn month grid under `root`: a day cell's frame, its
 * day number and an event row (MONTH_ROW_PX when none is drawn). `null`
 * when no month cell is in the page.
 */
export function monthPerDayIn(root: ParentNode): number | null {
  // The month's cells only: the week view's all-day row is built of the same parts.
  const frame = root.querySelector<HTMLElement>(".fc-dayGridMonth-view .fc-daygrid-day-frame");
  const top = frame?.querySelector<HTMLElement>(".fc-daygrid-day-top");
  if (!frame || !top || frame.clientHeight <= 0) return null;
  const row = root.querySelector<HTMLElement>(".fc-dayGridMonth-view .fc-daygrid-event-harness")?.offsetHeight || MONTH_ROW_PX;
  return perDayFor(frame.clientHeight - top.offsetHeight, row);
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
