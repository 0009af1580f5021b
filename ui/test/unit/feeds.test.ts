import { beforeEach, describe, expect, test } from "vitest";
import { feedProblemText, feedStatus } from "../../src/lib/feeds";
import { setLang } from "../../src/i18n";
import { toApiError, type SubscriptionView } from "../../src/ipc";

const NOW = new Date("2026-03-09T12:00:00Z");
const sub = (s: Partial<SubscriptionView>): SubscriptionView => ({
  calendar_id: 7,
  calendar: "Team",
  url: "https://example.org/team.ics",
  every_minutes: 60,
  last_refresh: "2026-03-09T11:30:00Z",
  last_ok: "2026-03-09T11:30:00Z",
  last_error: null,
  next_refresh: "2026-03-09T12:30:00Z",
  ...s,
});

beforeEach(() => setLang("en"));

describe("feedStatus", () => {
  test("a good refresh: when, and the URL on hover", () => {
    expect(feedStatus(sub({}), "UTC", "en-GB", NOW)).toEqual({ text: "Refreshed 11:30", problem: null, title: "https://example.org/team.ics" });
    expect(feedStatus(sub({ last_refresh: null, last_ok: null }), "UTC", "en-GB", NOW).text).toBe("Not refreshed yet");
  });
  test("a failed refresh: plain words, the detail and the copy kept on hover", () => {
    const s = feedStatus(sub({ last_refresh: "2026-03-09T11:50:00Z", last_error: { kind: "feed_http", message: "the server answered HTTP 500 Internal Server Error" } }), "UTC", "en-GB", NOW);
    expect(s.text).toBe("Refresh failed 11:50");
    expect(s.problem).toBe("Server error (HTTP 500)");
    expect(s.title).toMatch(/^https:\/\/example.org\/team.ics\nThe server answered with an error.\nthe server answered HTTP 500 Internal Server Error\nShowing the copy from /);
  });
  test("in Chinese", () => {
    setLang("zh-CN");
    const s = feedStatus(sub({ last_error: { kind: "feed_unreachable", message: "cannot connect: refused" } }), "UTC", "zh-CN", NOW);
    expect(s.problem).toBe("无法连接服务器");
    expect(s.text).toBe("刷新失败 11:30");
  });
});

test("every feed error kind crosses IPC as itself and has words; others have general words", () => {
  for (const kind of ["feed_url", "feed_unreachable", "feed_timeout", "feed_http", "feed_too_large", "feed_not_calendar", "feed_calendar_in_use"] as const) {
    expect(toApiError({ kind, message: "x" }).kind).toBe(kind);
    expect(feedProblemText({ kind, message: "x" })).not.toBe("The feed could not be fetched.");
  }
  expect(feedProblemText({ kind: "internal", message: "x" })).toBe("The feed could not be fetched.");
});
