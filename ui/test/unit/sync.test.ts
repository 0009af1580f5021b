import { afterEach, describe, expect, test } from "vitest";
import type { SyncStatus } from "../../src/ipc/bindings";
import { setLang } from "../../src/i18n";
import { formatClock } from "../../src/lib/dates";
import { syncView } from "../../src/lib/sync";

const NOW = new Date("2026-12-06T12:00:00Z");
const TZ = "Europe/Berlin";
const status = (s: Partial<SyncStatus>): SyncStatus => ({ state: "synced", last_sync_at: null, since: null, reason: null, waiting: 0, ...s });

afterEach(() => setLang("en"));

describe("formatClock", () => {
  test("today: the time in the zone; another day: with the weekday", () => {
    expect(formatClock("2026-12-06T08:05:00Z", TZ, "en-GB", NOW)).toBe("09:05");
    expect(formatClock("2026-12-05T20:30:00Z", TZ, "en-GB", NOW)).toBe("Sat 21:30");
    // 23:30 UTC on the 5th is already the 6th in Berlin: today.
    expect(formatClock("2026-12-05T23:30:00Z", TZ, "en-GB", NOW)).toBe("00:30");
    expect(formatClock("2026-12-06T08:05:00Z", TZ, "zh-CN", NOW)).toBe("09:05");
    expect(formatClock("2026-12-06T13:05:00Z", TZ, "en-US", NOW)).toBe("2:05 PM");
    expect(formatClock("not a time", TZ, "en-GB", NOW)).toBe("not a time");
  });
});

describe("syncView", () => {
  const view = (s: Partial<SyncStatus>, locale = "en-GB") => syncView(status(s), TZ, locale, NOW);

  test("off (not paired) hides the indicator", () => {
    expect(view({ state: "off" })).toBeNull();
  });

  test("synced says when; syncing says what waits", () => {
    expect(view({ last_sync_at: "2026-12-06T08:05:00Z" })).toMatchObject({ text: "Synced 09:05", tone: "ok" });
    expect(view({ last_sync_at: null })?.text).toBe("Synced");
    expect(view({ state: "syncing", waiting: 2 })).toMatchObject({ text: "Syncing… (2 waiting)", tone: "busy", title: "Never synced" });
  });

  test("offline says since when and how many changes wait; the reason is on hover", () => {
    const v = view({ state: "offline", since: "2026-12-06T10:15:00Z", reason: "ws://x: connection refused", waiting: 3, last_sync_at: "2026-12-06T10:00:00Z" });
    expect(v?.text).toBe("Offline since 11:15 (3 waiting)");
    expect(v?.tone).toBe("warn");
    expect(v?.title.split("\n")[0]).toBe("ws://x: connection refused");
    expect(v?.title).toContain("Last synced");
    expect(view({ state: "offline", since: "2026-12-06T10:15:00Z" })?.text).toBe("Offline since 11:15");
  });

  test("error gives the reason", () => {
    const v = view({ state: "error", since: "2026-12-06T10:15:00Z", reason: "refused (HTTP 401): device revoked" });
    expect(v).toMatchObject({ text: "Sync error: refused (HTTP 401): device revoked", tone: "error" });
  });

  test("in Chinese", () => {
    setLang("zh-CN");
    expect(view({ last_sync_at: "2026-12-06T08:05:00Z" }, "zh-CN")?.text).toBe("已同步 09:05");
    expect(view({ state: "offline", since: "2026-12-06T10:15:00Z", waiting: 3 }, "zh-CN")?.text).toBe("自 11:15 起离线（3 项待发送）");
    expect(view({ state: "error", reason: "device revoked" }, "zh-CN")?.text).toBe("同步出错：device revoked");
  });
});
