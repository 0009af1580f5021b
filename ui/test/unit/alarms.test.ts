import { beforeEach, describe, expect, test } from "vitest";
import { againLabel, alarmLabel, durationLabel, parseMinutesList, rowOf, snoozeLabel, specOf } from "../../src/lib/alarms";
import { setLang } from "../../src/i18n";
import type { AlarmSpec } from "../../src/ipc/bindings";

beforeEach(() => setLang("en"));

describe("rows and specs", () => {
  test.each<AlarmSpec>([
    { kind: "before", minutes: 15, related: "start" },
    { kind: "before", minutes: 0, related: "start" },
    { kind: "before", minutes: -10, related: "end" },
    { kind: "before", minutes: 1440, related: "end" },
    { kind: "at", at: "2026-12-03T09:00" },
  ])("%o round-trips", (spec) => {
    expect(specOf(rowOf(spec, "2026-12-02T10:00"))).toEqual(spec);
  });

  test("negative minutes are an 'after' row", () => {
    expect(rowOf({ kind: "before", minutes: -10, related: "end" }, "")).toMatchObject({ kind: "after", minutes: 10, related: "end" });
  });

  test("'after' rows send negative minutes, rounded", () => {
    expect(specOf({ kind: "after", minutes: 4.6, related: "start", at: "", again: null })).toEqual({ kind: "before", minutes: -5, related: "start" });
  });
});

describe("labels", () => {
  test.each<[AlarmSpec, string]>([
    [{ kind: "before", minutes: 0, related: "start" }, "At start"],
    [{ kind: "before", minutes: 0, related: "end" }, "At end"],
    [{ kind: "before", minutes: 15, related: "start" }, "15 minutes before start"],
    [{ kind: "before", minutes: 1, related: "start" }, "1 minute before start"],
    [{ kind: "before", minutes: 60, related: "start" }, "1 hour before start"],
    [{ kind: "before", minutes: 1440, related: "start" }, "1 day before start"],
    [{ kind: "before", minutes: 2880, related: "end" }, "2 days before end"],
    [{ kind: "before", minutes: -90, related: "end" }, "90 minutes after end"],
    [{ kind: "before", minutes: -120, related: "start" }, "2 hours after start"],
  ])("%o", (spec, label) => {
    expect(alarmLabel(spec, "en-US")).toBe(label);
  });

  test("a task's reminders count from its due time, whichever end they name", () => {
    expect(alarmLabel({ kind: "before", minutes: 1440, related: "end" }, "en-US", true)).toBe("1 day before due");
    expect(alarmLabel({ kind: "before", minutes: 60, related: "start" }, "en-US", true)).toBe("1 hour before due");
    expect(alarmLabel({ kind: "before", minutes: 0, related: "end" }, "en-US", true)).toBe("At the due time");
    expect(alarmLabel({ kind: "before", minutes: -30, related: "end" }, "en-US", true)).toBe("30 minutes after due");
  });

  test("an absolute time shows the wall time as written", () => {
    expect(alarmLabel({ kind: "at", at: "2026-12-03T09:00" }, "en-US")).toBe("At Dec 3, 9:00 AM");
  });

  test("Chinese", () => {
    setLang("zh-CN");
    expect(alarmLabel({ kind: "before", minutes: 30, related: "start" }, "zh-CN")).toBe("开始前 30 分钟");
    expect(snoozeLabel(60)).toBe("1 小时");
  });

  test("durations and snoozes pick the largest whole unit", () => {
    expect(durationLabel(10080)).toBe("1 week");
    expect(durationLabel(20160)).toBe("2 weeks");
    expect(snoozeLabel(5)).toBe("5 min");
    expect(snoozeLabel(120)).toBe("2 h");
    expect(snoozeLabel(1440)).toBe("1 d");
  });
});

describe("parseMinutesList", () => {
  test("minutes, hours, days; sorted and unique", () => {
    expect(parseMinutesList("30, 5, 1h, 10 15 1d, 5")).toEqual([5, 10, 15, 30, 60, 1440]);
    expect(parseMinutesList("5，10")).toEqual([5, 10]);
  });
  test("rejects junk and zero", () => {
    expect(parseMinutesList("5, soon")).toBeNull();
    expect(parseMinutesList("0")).toBeNull();
    expect(parseMinutesList("")).toBeNull();
  });
});

describe("again until dismissed", () => {
  test("a row carries `again` only when it escalates, and round-trips", () => {
    const once = { kind: "before", minutes: 10, related: "start" } as const;
    expect(specOf(rowOf(once, "2026-12-03T09:00"))).toEqual(once);
    expect(Object.keys(specOf(rowOf(once, "2026-12-03T09:00")))).not.toContain("again");
    const nag = { kind: "before", minutes: 0, related: "start", again: { every_minutes: 5, max: 6 } } as const;
    expect(specOf(rowOf(nag, "2026-12-03T09:00"))).toEqual(nag);
    const at = { kind: "at", at: "2026-12-03T09:00", again: { every_minutes: 60, max: 3 } } as const;
    expect(specOf(rowOf(at, "2026-12-03T09:00"))).toEqual(at);
  });
  test("label", () => {
    setLang("en");
    expect(againLabel({ every_minutes: 5, max: 6 })).toBe(", then every 5 minutes until dismissed (at most 6 times)");
    expect(againLabel(null)).toBe("");
  });
});
