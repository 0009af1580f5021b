import { describe, expect, test } from "vitest";
import {
  addDays, addMinutes, formatInstant, isLastWeekdayOfMonth, lastDayOf, minutesBetween, nowWall, parseWall,
  toDateStr, toMinuteStr, toWallStr, weekdayCode, weekdayOrdinal,
} from "../../src/lib/dates";
import { isNoop, moveDeltas } from "../../src/lib/drag";

const w = (s: string): Date => parseWall(s) as Date;

describe("wall dates", () => {
  test("parse and print without any zone", () => {
    expect(toWallStr(w("2026-12-02T09:30"))).toBe("2026-12-02T09:30:00");
    expect(toMinuteStr(w("2026-12-02T09:30:59"))).toBe("2026-12-02T09:30");
    expect(toDateStr(w("2026-12-02"))).toBe("2026-12-02");
  });
  test("reject malformed and impossible dates", () => {
    expect(parseWall("2026-02-31")).toBeNull();
    expect(parseWall("2026-12-02 09:30")).toBeNull();
    expect(parseWall("tomorrow")).toBeNull();
  });
  test("arithmetic keeps the form", () => {
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
    expect(addDays("2026-03-28T10:00", 2)).toBe("2026-03-30T10:00");
    expect(addMinutes("2026-12-31T23:30", 45)).toBe("2027-01-01T00:15");
    expect(minutesBetween("2026-12-02T09:00", "2026-12-03T10:30")).toBe(1530);
  });
  test("weekday helpers", () => {
    expect(weekdayCode("2026-12-02")).toBe("WE");
    expect(weekdayOrdinal("2026-12-08")).toBe(2);
    expect(weekdayOrdinal("2026-12-31")).toBe(-1);
    expect(isLastWeekdayOfMonth("2026-12-25")).toBe(true);
    expect(isLastWeekdayOfMonth("2026-12-18")).toBe(false);
  });
  test("the last day of an all-day span", () => {
    expect(lastDayOf("2026-12-09", "2026-12-11")).toBe("2026-12-10");
    expect(lastDayOf("2026-12-09", "2026-12-09")).toBe("2026-12-09");
  });
});

describe("zones via Intl", () => {
  const instant = new Date("2026-12-02T08:15:00Z");
  test("nowWall is the zone's wall clock", () => {
    expect(toMinuteStr(nowWall("Asia/Shanghai", instant))).toBe("2026-12-02T16:15");
    expect(toMinuteStr(nowWall("America/New_York", instant))).toBe("2026-12-02T03:15");
    expect(toMinuteStr(nowWall("UTC", instant))).toBe("2026-12-02T08:15");
  });
  test("an unknown zone falls back to the system's", () => {
    expect(nowWall("Not/AZone", instant)).toBeInstanceOf(Date);
  });
  test("formatInstant shows the instant in the display zone", () => {
    expect(formatInstant("2026-12-02T08:15:00Z", "Asia/Tokyo", "en-US")).toBe("Wed, Dec 2, 5:15 PM");
    expect(formatInstant("2026-12-02", "Asia/Tokyo", "en-US")).toBe("Wed, Dec 2");
  });
});

describe("drag deltas", () => {
  test("a move shifts both ends alike", () => {
    const d = moveDeltas(
      { start: w("2026-12-02T14:00"), end: w("2026-12-02T15:00") },
      { start: w("2026-12-03T15:30"), end: w("2026-12-03T16:30") },
    );
    expect(d).toEqual({ start_delta_minutes: 1530, end_delta_minutes: 1530 });
  });
  test("a resize moves only the end", () => {
    const d = moveDeltas(
      { start: w("2026-12-02T14:00"), end: w("2026-12-02T15:00") },
      { start: w("2026-12-02T14:00"), end: w("2026-12-02T16:15") },
    );
    expect(d).toEqual({ start_delta_minutes: 0, end_delta_minutes: 75 });
  });
  test("moving backwards is negative; a missing end moves with the start", () => {
    const d = moveDeltas({ start: w("2026-12-09"), end: null }, { start: w("2026-12-07"), end: null });
    expect(d).toEqual({ start_delta_minutes: -2880, end_delta_minutes: -2880 });
  });
  test("no change is a no-op", () => {
    expect(isNoop(moveDeltas({ start: w("2026-12-02T14:00"), end: null }, { start: w("2026-12-02T14:00"), end: null }))).toBe(true);
  });
});
