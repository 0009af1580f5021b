import { describe, expect, test } from "vitest";
import type { OccurrenceView } from "../../src/ipc/bindings";
import { MAX_PER_DAY, MONTH_CELL_CHROME_PX, MONTH_PER_DAY, MONTH_ROW_PX, monthPerDay, moreByDate, moreTotal, perDayFor } from "../../src/lib/more";
import { capPerDay, perDayError } from "../../src/mock/per-day";

describe("monthPerDay", () => {
  test("asks for one more than an ordinary cell shows, not a fixed six", () => {
    // 1200×800 window: the grid is ≈690 px, a cell (≈110 px, 32 of them the
    // day number) has room for 3 rows of 21 px, so 4 bring the link.
    expect(monthPerDay(690)).toBe(4);
    expect(monthPerDay(690)).toBeLessThan(MONTH_PER_DAY);
  });
  test("asks for MONTH_PER_DAY when not laid out yet", () => {
    expect(monthPerDay(0)).toBe(MONTH_PER_DAY);
    expect(monthPerDay(-5)).toBe(MONTH_PER_DAY);
  });
  test("asks for one more than a tall cell can show, so the link is always drawn", () => {
    // 2560×1440: ≈1340 px, a cell has room for 8 rows of 21 px.
    const n = monthPerDay(1340);
    expect(n).toBeGreaterThan(8);
    expect(n).toBe(Math.floor((1340 / 6 - MONTH_CELL_CHROME_PX) / MONTH_ROW_PX) + 1);
  });
  test("never asks for more than the backend allows, nor for less than one", () => {
    expect(monthPerDay(1e6)).toBe(MAX_PER_DAY);
    expect(monthPerDay(60)).toBe(1);
    expect(perDayFor(-3, 21)).toBe(1);
    expect(perDayFor(100, 0)).toBe(MAX_PER_DAY);
  });
  test("perDayFor: one more than the rows that fit", () => {
    expect(perDayFor(77, 21)).toBe(4);
    expect(perDayFor(84, 21)).toBe(5);
    expect(perDayFor(83, 21)).toBe(4);
  });
});

describe("moreByDate and moreTotal", () => {
  test("index the backend's counts and add FullCalendar's", () => {
    const m = moreByDate([
      { date: "2026-03-10", count: 7 },
      { date: "2026-03-12", count: 1 },
    ]);
    expect(m.get("2026-03-10")).toBe(7);
    expect(moreTotal(2, "2026-03-10", m)).toBe(9);
    expect(moreTotal(2, "2026-03-11", m)).toBe(2);
    expect(moreTotal(3, undefined, m)).toBe(3);
  });
});

const occ = (title: string, start: string, end: string, uid = title): OccurrenceView => ({
  event: { calendar_id: 1, uid, recurrence_id: null },
  title,
  start,
  end,
  all_day: start.length === 10,
  color: "#3a86ff",
  location: null,
  recurring: false,
  has_alarms: false,
  task: null,
});

describe("the fake's per_day cap (same rules as the backend)", () => {
  const day = [
    occ("Standup", "2026-03-10T09:00:00", "2026-03-10T09:15:00"),
    occ("Early", "2026-03-10T07:00:00", "2026-03-10T08:00:00"),
    occ("Late", "2026-03-10T23:00:00", "2026-03-11T00:00:00"),
    occ("Conference", "2026-03-10T18:00:00", "2026-03-12T12:00:00"),
    occ("Holiday", "2026-03-10", "2026-03-11"),
    occ("B", "2026-03-11T09:00:00", "2026-03-11T10:00:00"),
    occ("A", "2026-03-11T09:00:00", "2026-03-11T10:00:00"),
    occ("Retreat", "2026-02-27T10:00:00", "2026-03-02T10:00:00"),
    occ("Brunch", "2026-03-01T11:00:00", "2026-03-01T12:00:00"),
  ];
  const titles = (xs: OccurrenceView[]): string[] => xs.map((o) => o.title);

  test("without per_day: everything by start then title, nothing counted", () => {
    const r = capPerDay(day, null, "2026-03-01T00:00:00");
    expect(titles(r.items)).toEqual(["Retreat", "Brunch", "Holiday", "Early", "Standup", "Conference", "Late", "A", "B"]);
    expect(r.more).toEqual([]);
  });
  test("all-day and multi-day first, then by start; the rest counted on the first day", () => {
    const r = capPerDay(day, 3, "2026-03-01T00:00:00");
    expect(titles(r.items.filter((o) => o.start.startsWith("2026-03-10")))).toEqual(["Holiday", "Early", "Conference"]);
    expect(r.more).toEqual([{ date: "2026-03-10", count: 2 }]);
  });
  test("same start: by title; began before the range: counts on its first day", () => {
    const r = capPerDay(day, 1, "2026-03-01T00:00:00");
    expect(titles(r.items)).toEqual(["Retreat", "Holiday", "A"]);
    expect(r.more).toEqual([
      { date: "2026-03-01", count: 1 },
      { date: "2026-03-10", count: 4 },
      { date: "2026-03-11", count: 1 },
    ]);
  });
  test("refuses per_day outside 1–100, naming it", () => {
    for (const n of [0, 101, 2.5]) expect(perDayError(n)?.message).toMatch(/^per_day: /);
    for (const n of [null, 1, 100]) expect(perDayError(n)).toBeNull();
  });
});
