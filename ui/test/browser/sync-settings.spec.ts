/**
 * Settings → Sync against the fake: join (and each refusal in plain words,
 * English and Chinese), the paired view with "Add a device" (code, expiry,
 * QR), the device list with Revoke (confirmed), Leave (confirmed; "Leave
 * anyway" when the server cannot be told).
 */
import type { Page } from "playwright-core";
import { expect, test } from "vitest";
import type { ApiError } from "../../src/ipc/bindings";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

async function openSync(page: Page, state: "paired" | "unpaired"): Promise<void> {
  await page.click("#settings-btn");
  await page.click("#set-tab-sync");
  await page.waitForSelector(`#sync-panel[data-state="${state}"]`);
}

async function failNext(page: Page, cmd: string, e: ApiError): Promise<void> {
  await page.evaluate(([c, err]) => window.__kairos.fake.failNext(c as string, err as never), [cmd, e] as const);
}

test("not paired: join with server, code and name; then the account is shown", async () => {
  const { page, errors } = await open("sync=off");
  await openSync(page, "unpaired");
  expect(await page.isVisible("#set-save")).toBe(false);
  await page.fill("#sync-server", "ws://192.168.1.10:8443");
  await page.fill("#sync-code", "ABCD-EFGH-JKLM");
  await page.fill("#sync-name", "Study");
  await page.click("#sync-join");
  await page.waitForSelector('#sync-panel[data-state="paired"]');
  const call = await waitForCall(page, "sync_join");
  expect(call.args).toEqual({ request: { server: "ws://192.168.1.10:8443", code: "ABCD-EFGH-JKLM", device_name: "Study" } });
  expect(await page.textContent("#sync-account-id")).toBe("alice");
  expect(await page.textContent("#sync-device-name")).toBe("Study");
  await page.waitForSelector('.device-row[data-this="1"]');
  expect(await page.textContent('.device-row[data-this="1"] .device-name')).toBe("Study");
  // The General tab is still there, with its Save.
  await page.click("#set-tab-general");
  expect(await page.isVisible("#set-save")).toBe(true);
  expect(errors).toEqual([]);
  await page.close();
});

test("each refusal says what is wrong and what to do; the form keeps what was typed", async () => {
  const { page } = await open("sync=off");
  await openSync(page, "unpaired");
  await page.fill("#sync-server", "ws://sync.example.org:8443");
  await page.fill("#sync-code", "OLD-CODE");
  const cases: [ApiError["kind"], RegExp][] = [
    ["sync_code_expired", /pairing code has expired\. Make a new one on a paired device/],
    ["sync_code_used", /was used already/],
    ["sync_code_wrong", /is not known/],
    ["sync_unreachable", /cannot be reached\. Check the address and port/],
    ["sync_timeout", /did not answer in time/],
    ["sync_tls", /does not trust the server's certificate/],
    ["sync_not_kairos", /not a Kairos sync server/],
    ["sync_version", /another protocol version/],
    ["sync_bad_url", /ws:\/\/HOST:PORT/],
  ];
  for (const [kind, want] of cases) {
    await failNext(page, "sync_join", { kind, message: `detail of ${kind}` });
    await page.click("#sync-join");
    await page.waitForFunction((k) => document.querySelector("#sync-error")?.getAttribute("title") === `detail of ${k}`, kind);
    expect(await page.textContent("#sync-error")).toMatch(want);
    expect(await page.isEnabled("#sync-join")).toBe(true);
  }
  expect(await page.inputValue("#sync-server")).toBe("ws://sync.example.org:8443");
  expect(await page.inputValue("#sync-code")).toBe("OLD-CODE");
  // A field the backend names (invalid) is shown as it says.
  await page.fill("#sync-code", "");
  await page.click("#sync-join");
  await page.waitForFunction(() => document.querySelector("#sync-error")?.textContent?.includes("pairing code shown"));
  expect(await page.getAttribute("#sync-panel", "data-state")).toBe("unpaired");
  await page.close();
});

test("in Chinese", async () => {
  const { page } = await open("sync=off&lang=zh-CN");
  await openSync(page, "unpaired");
  expect(await page.textContent("#set-tab-sync")).toBe("同步");
  expect(await page.textContent("#sync-join")).toBe("加入");
  await page.fill("#sync-server", "ws://x:1");
  await page.fill("#sync-code", "C");
  await failNext(page, "sync_join", { kind: "sync_unreachable", message: "refused" });
  await page.click("#sync-join");
  await page.waitForSelector("#sync-error:not([hidden])");
  expect(await page.textContent("#sync-error")).toBe("无法连接服务器。请检查地址和端口、服务器是否在运行，以及网络连接。");
  await page.close();
});

test("paired: add a device shows a code, its expiry and a QR; revoke asks first; leave asks first", async () => {
  const { page, errors } = await open();
  await openSync(page, "paired");
  expect(await page.textContent("#sync-account-id")).toBe("alice");
  await page.waitForSelector(".device-row");
  const rows = await page.$$eval(".device-row", (rs) => rs.map((r) => [r.querySelector(".device-name")?.textContent, !!r.querySelector(".device-this"), !!r.querySelector(".device-revoke")]));
  expect(rows).toEqual([["Desk", true, false], ["Laptop", false, true], ["Phone", false, true]]);
  expect(await page.textContent('.device-row[data-device="d-phone"] .device-seen')).toBe("Never connected");
  expect(await page.textContent('.device-row[data-device="d-desk"] .device-seen')).toBe("Connected now");

  await page.click("#sync-add");
  await page.waitForSelector("#sync-code-box:not([hidden]) .sync-qr svg");
  expect(await page.textContent("#sync-new-code")).toBe("K7QM-4XTP-9WRD");
  // A time, with its date when the expiry (15 min ahead) falls on the next day.
  expect(await page.textContent("#sync-expires")).toMatch(/^Works once, until ([A-Z][a-z]{2} \d?\d, )?\d?\d:\d\d/);
  expect(await page.getAttribute(".sync-qr", "title")).toContain("code=K7QM-4XTP-9WRD");

  // Revoke: nothing happens until confirmed; Cancel takes it back.
  await page.click('.device-row[data-device="d-laptop"] .device-revoke');
  expect(await page.textContent('.device-row[data-device="d-laptop"] .device-ask')).toContain("Revoke Laptop?");
  expect(await calls(page, "sync_revoke")).toEqual([]);
  await page.click('.device-row[data-device="d-laptop"] .device-ask .ghost');
  expect(await page.isVisible('.device-row[data-device="d-laptop"] .device-revoke')).toBe(true);
  await page.click('.device-row[data-device="d-laptop"] .device-revoke');
  await page.click('.device-row[data-device="d-laptop"] .device-revoke-confirm');
  expect((await waitForCall(page, "sync_revoke")).args).toEqual({ device: "d-laptop" });
  await page.waitForSelector('.device-row.revoked[data-device="d-laptop"]');
  expect(await page.isVisible('.device-row[data-device="d-laptop"] .device-revoke')).toBe(false);

  // Leave: confirmed, then the join form.
  await page.click("#sync-leave");
  expect(await page.textContent("#sync-leave-box")).toContain("its events and reminders stay here");
  expect(await calls(page, "sync_leave")).toEqual([]);
  await page.click("#sync-leave-confirm");
  await page.waitForSelector('#sync-panel[data-state="unpaired"]');
  expect((await waitForCall(page, "sync_leave")).args).toEqual({ force: false });
  // The status bar's indicator follows (the shell's app_status says off).
  expect(errors).toEqual([]);
  await page.close();
});

test("the status bar's sync indicator opens Settings → Sync", async () => {
  const { page } = await open();
  await page.click("#status-sync");
  await page.waitForSelector('#sync-panel[data-state="paired"]');
  expect(await page.getAttribute("#set-tab-sync", "aria-selected")).toBe("true");
  expect(await page.isVisible("#set-general")).toBe(false);
  await page.close();
});

test("leave with the server unreachable offers to leave anyway; a revoked device is told so", async () => {
  const { page } = await open();
  await failNext(page, "sync_devices", { kind: "sync_revoked", message: "refused (HTTP 401): device revoked" });
  await openSync(page, "paired");
  await page.waitForSelector("#sync-error:not([hidden])");
  expect(await page.textContent("#sync-error")).toBe("This device was removed from the sync account. Leave, then join again with a new code.");
  await failNext(page, "sync_leave", { kind: "sync_unreachable", message: "ws://x: connection refused" });
  await page.click("#sync-leave");
  await page.click("#sync-leave-confirm");
  await page.waitForSelector("#sync-leave-force");
  expect(await page.getAttribute("#sync-panel", "data-state")).toBe("paired");
  await page.click("#sync-leave-force");
  await page.waitForSelector('#sync-panel[data-state="unpaired"]');
  const leaves = await calls(page, "sync_leave");
  expect(leaves.map((c) => c.args)).toEqual([{ force: false }, { force: true }]);
  await page.close();
});
