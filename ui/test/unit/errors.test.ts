import { beforeEach, describe, expect, test } from "vitest";
import { explain } from "../../src/lib/errors";
import { setLang } from "../../src/i18n";
import { toApiError } from "../../src/ipc";
import { ruleMatches } from "../../src/mock/fake";

beforeEach(() => setLang("en"));

describe("explain", () => {
  test("names the field and the input of a validation error", () => {
    expect(explain({ kind: "invalid", message: "end: before the start" })).toEqual({ text: "End: before the start", input: "ev-end" });
    expect(explain({ kind: "invalid", message: 'time zone: "Mars/Base" is not an IANA time zone' }).input).toBe("ev-tz");
    expect(explain({ kind: "invalid", message: "recurrence: \"X\" is not an RRULE value" }).input).toBe("ev-rrule");
  });
  test("in Chinese the field is named in Chinese", () => {
    setLang("zh-CN");
    expect(explain({ kind: "invalid", message: "title: longer than 1000 characters" }).text).toBe("标题: longer than 1000 characters");
  });
  test("other errors keep their message", () => {
    expect(explain({ kind: "invalid", message: "the last calendar cannot be deleted" })).toEqual({ text: "the last calendar cannot be deleted", input: null });
    expect(explain({ kind: "store", message: "database is locked" }).text).toBe("Something went wrong: database is locked");
  });
});

describe("toApiError", () => {
  test("keeps {kind, message}; wraps strings and unknown kinds", () => {
    expect(toApiError({ kind: "io", message: "no such file" })).toEqual({ kind: "io", message: "no such file" });
    expect(toApiError("command foo not found")).toEqual({ kind: "internal", message: "command foo not found" });
    expect(toApiError({ kind: "weird", message: 3 })).toEqual({ kind: "internal", message: "3" });
  });
});

describe("the fake's rule matching (used by the browser tests)", () => {
  test("monthly on the last Friday", () => {
    expect(ruleMatches("FREQ=MONTHLY;BYDAY=-1FR", "2026-12-25", "2027-01-29")).toBe(true);
    expect(ruleMatches("FREQ=MONTHLY;BYDAY=-1FR", "2026-12-25", "2027-01-22")).toBe(false);
    expect(ruleMatches("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-12-02", "2026-12-05")).toBe(false);
    expect(ruleMatches("FREQ=DAILY", "2026-12-02", "2026-12-01")).toBe(false);
  });
});
