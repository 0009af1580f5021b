/**
 * What a drag or resize in FullCalendar means for `move_event`: wall-clock
 * minute shifts of the start and of the end. FullCalendar runs in UTC with
 * the backend's wall times, so a plain difference is the wall-clock shift.
 */

export interface Span {
  start: Date;
  /** `null` when FullCalendar dropped the end (then it moves with the start). */
  end: Date | null;
}

export interface MoveDeltas {
  start_delta_minutes: number;
  end_delta_minutes: number;
}

const minutes = (a: Date, b: Date): number => Math.round((b.getTime() - a.getTime()) / 60_000);

/** Deltas from the span before the drag to the span after it. */
export function moveDeltas(before: Span, after: Span): MoveDeltas {
  const start = minutes(before.start, after.start);
  const end = before.end && after.end ? minutes(before.end, after.end) : start;
  return { start_delta_minutes: start, end_delta_minutes: end };
}

/** Whether a drag changed nothing worth a request. */
export function isNoop(d: MoveDeltas): boolean {
  return d.start_delta_minutes === 0 && d.end_delta_minutes === 0;
}
