/**
 * The sync indicator in the status bar against the fake: what app_status
 * says at start, then each state the shell pushes with
 * `kairos://sync-changed`; Chinese strings and dark mode.
 */
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import type { SyncStatus } from "../../src/ipc/bindings";
import { useApp } from "./harness";

const open = useApp();

async function push(page: Page, s: SyncStatus): Promise<void> {
  await page.evaluate((payload) => window.__kairos.emit("kairos://sync-changed", payload), s);
}

/** The indicator's text once it has `state`. */
async function shown(page: Page, state: string): Promise<string> {
  await page.waitForSelector(`#status-sync[data-state="${state}"]`);
  return (await page.textContent("#status-sync")) ?? "";
}

const OFFLINE: SyncStatus = {
  state: "offline", last_sync_at: "2026-12-06T08:00:00Z", since: new Date(Date.now() - 60_000).toISOString(),
  reason: "ws://sync.example:8443: connection refused", waiting: 3,
};

// The times are minutes ago: just after midnight they carry yesterday's weekday.
test("synced at start; offline with what waits; error with the reason; hidden when sync is off", async () => {
  const { page, errors } = await open();
  expect(await shown(page, "synced")).toMatch(/^Synced ([A-Z][a-z]{2} )?\d?\d:\d\d/);
  expect(await page.getAttribute("#status-sync", "class")).toContain("sync-ok");

  await push(page, OFFLINE);
  expect(await shown(page, "offline")).toMatch(/^Offline since ([A-Z][a-z]{2} )?\d?\d:\d\d\s(AM|PM) \(3 waiting\)$/);
  expect(await page.getAttribute("#status-sync", "title")).toContain("connection refused");
  expect(await page.getAttribute("#status-sync", "class")).toContain("sync-warn");

  await push(page, { ...OFFLINE, state: "syncing", since: null, reason: null, waiting: 1 });
  expect(await shown(page, "syncing")).toBe("Syncing… (1 waiting)");

  await push(page, { ...OFFLINE, state: "error", reason: "refused (HTTP 401): device revoked", waiting: 0 });
  expect(await shown(page, "error")).toBe("Sync error: refused (HTTP 401): device revoked");

  await push(page, { state: "off", last_sync_at: null, since: null, reason: null, waiting: 0 });
  await page.waitForSelector("#status-sync", { state: "detached" });
  // The rest of the bar is still there.
  expect(await page.isVisible("#status-tz")).toBe(true);
  expect(errors).toEqual([]);
  await page.close();
});

test("in Chinese, and legible in dark mode", async () => {
  const zh = await open("lang=zh-CN");
  expect(await shown(zh.page, "synced")).toMatch(/^已同步 (\S+ ?)?\d?\d:\d\d/);
  await push(zh.page, OFFLINE);
  expect(await shown(zh.page, "offline")).toMatch(/^自 .+ 起离线（3 项待发送）$/);
  await zh.page.close();

  const colour = async (query: string): Promise<string> => {
    const { page } = await open(query);
    await push(page, OFFLINE);
    await shown(page, "offline");
    const c = await page.$eval("#status-sync", (e) => getComputedStyle(e).color);
    await page.close();
    return c;
  };
  // The theme's own warning colour: dark amber on light, light amber on dark.
  expect(await colour("")).toBe("rgb(180, 83, 9)");
  expect(await colour("theme=dark")).toBe("rgb(245, 180, 84)");
});
