import { describe, expect, test } from "vitest";
import { buildRule, cleanRule, monthlyByDay, presetOf, PRESETS, ruleToSave } from "../../src/lib/recurrence";

// 2026-12-08 is the second Tuesday of December; 2026-12-25 the last (4th) Friday;
// 2026-12-31 the fifth Thursday.
describe("buildRule", () => {
  test.each([
    ["none", "2026-12-08T09:00", null],
    ["daily", "2026-12-08T09:00", "FREQ=DAILY"],
    ["weekdays", "2026-12-08T09:00", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"],
    ["weekly", "2026-12-08T09:00", "FREQ=WEEKLY;BYDAY=TU"],
    ["monthly", "2026-12-08T09:00", "FREQ=MONTHLY;BYDAY=2TU"],
    ["monthly", "2026-12-31", "FREQ=MONTHLY;BYDAY=-1TH"],
    ["yearly", "2026-12-08", "FREQ=YEARLY"],
  ] as const)("%s from %s", (preset, start, rule) => {
    expect(buildRule(preset, start)).toBe(rule);
  });

  test("custom takes the text, without an RRULE: prefix", () => {
    expect(buildRule("custom", "2026-12-08", "  RRULE:FREQ=WEEKLY;INTERVAL=2 ")).toBe("FREQ=WEEKLY;INTERVAL=2");
    expect(buildRule("custom", "2026-12-08", "   ")).toBeNull();
  });

  test("monthly BYDAY counts weeks of the month", () => {
    expect(monthlyByDay("2026-12-01")).toBe("1TU");
    expect(monthlyByDay("2026-12-25")).toBe("4FR");
    expect(monthlyByDay("2026-12-29")).toBe("-1TU");
  });
});

describe("presetOf", () => {
  test("every preset's own rule reads back as that preset", () => {
    for (const start of ["2026-12-08T09:00", "2026-12-31", "2027-02-28T18:30"]) {
      for (const p of PRESETS.filter((x) => x !== "custom")) {
        expect(presetOf(buildRule(p, start), start), `${p} at ${start}`).toBe(p);
      }
    }
  });

  test.each([
    ["FREQ=WEEKLY", "weekly"],
    ["freq=weekly;byday=tu", "weekly"],
    ["FREQ=WEEKLY;BYDAY=FR,TH,WE,TU,MO", "weekdays"],
    ["FREQ=DAILY;INTERVAL=1", "daily"],
    ["FREQ=DAILY;INTERVAL=2", "custom"],
    ["FREQ=DAILY;COUNT=5", "custom"],
    ["FREQ=WEEKLY;BYDAY=MO", "custom"],
    ["FREQ=MONTHLY", "custom"],
    ["FREQ=MONTHLY;BYDAY=3TU", "custom"],
    ["FREQ=YEARLY;UNTIL=20300101", "custom"],
    ["RRULE:FREQ=YEARLY", "yearly"],
    ["", "none"],
  ] as const)("%s on a Tuesday is %s", (rule, preset) => {
    expect(presetOf(rule, "2026-12-08T09:00")).toBe(preset);
  });

  test("a last weekday written as -1 is the monthly preset when it is the 4th and last", () => {
    expect(presetOf("FREQ=MONTHLY;BYDAY=-1FR", "2026-12-25")).toBe("monthly");
    expect(presetOf("FREQ=MONTHLY;BYDAY=-1FR", "2026-12-18")).toBe("custom");
  });
});

describe("ruleToSave", () => {
  test("keeps the original text when nothing that shapes it changed", () => {
    const original = { rule: "FREQ=WEEKLY", start: "2026-12-08T09:00" };
    expect(ruleToSave("weekly", "2026-12-08T10:00", "", original)).toBe("FREQ=WEEKLY");
  });
  test("rebuilds when the start moved to another day", () => {
    const original = { rule: "FREQ=WEEKLY", start: "2026-12-08T09:00" };
    expect(ruleToSave("weekly", "2026-12-09T09:00", "", original)).toBe("FREQ=WEEKLY;BYDAY=WE");
  });
  test("custom always sends the text", () => {
    expect(ruleToSave("custom", "2026-12-08", "FREQ=DAILY;COUNT=3", { rule: null, start: "2026-12-08" })).toBe("FREQ=DAILY;COUNT=3");
  });
  test("cleanRule", () => {
    expect(cleanRule(null)).toBeNull();
    expect(cleanRule("rrule:FREQ=DAILY")).toBe("FREQ=DAILY");
  });
});
