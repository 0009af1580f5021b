/** A CalDAV account changed after it was added: "Edit" (interval, calendars with "Refresh list", new password) and the CA field of a new account. */
import { expect, test } from "vitest";
import { useApp, waitForCall } from "./harness";

const open = useApp();

test("edit: refresh the list, tick the new calendar, untick one, interval; a refused password keeps the dialog", async () => {
  const { page, errors } = await open("caldav=1");
  const good = page.locator(".dav-account", { hasText: "alice · dav.example.com" });
  await good.waitFor();
  await good.locator(".dav-edit").click();
  await page.waitForSelector("#caldav-edit-dialog");
  expect(await page.inputValue("#dav-every")).toBe("300");
  const names = (): Promise<string[]> => page.locator("#dav-edit-calendars .dav-cal-name").allTextContents();
  const ticks = (): Promise<boolean[]> => page.locator("input.dav-edit-pick").evaluateAll((b) => b.map((x) => (x as HTMLInputElement).checked));
  expect(await names()).toEqual(["Work", "Family", "Chores"]);
  expect(await ticks()).toEqual([true, true, false]);
  // A tick changed before the refresh survives it; the new calendar is marked, unticked.
  await page.locator("input.dav-edit-pick").nth(1).uncheck();
  await page.click("#dav-refresh");
  await waitForCall(page, "refresh_caldav_account");
  await page.waitForSelector('#dav-edit-calendars li[data-new="true"]');
  expect(await names()).toEqual(["Chores", "Family", "Trips", "Work"]);
  expect(await ticks()).toEqual([false, false, false, true]);
  expect(await page.textContent('#dav-edit-calendars li[data-new="true"] .dav-new')).toBe("New");
  await page.locator("input.dav-edit-pick").nth(2).check();
  await page.selectOption("#dav-every", "900");

  // A password the server refuses: said in plain words, nothing saved.
  await page.fill("#dav-new-password", "wrong");
  await page.click("#dav-save");
  await page.waitForSelector("#dav-edit-error:not([hidden])");
  expect(await page.textContent("#dav-edit-error")).toMatch(/^The server refused the user name or password/);
  expect(await page.getAttribute("#dav-new-password", "aria-invalid")).toBe("true");
  expect(await page.locator("#caldav-edit-dialog").isVisible()).toBe(true);

  await page.fill("#dav-new-password", "");
  await page.click("#dav-save");
  const call = await waitForCall(page, "edit_caldav_account");
  expect(call.args.request).toMatchObject({ every_seconds: 900, choose: ["Trips"], unchoose: ["Family"], password: null });
  await page.waitForSelector("#caldav-edit-dialog", { state: "detached" });
  expect(await page.locator(".cal-row:has(.cal-dav-badge) .cal-name").allTextContents()).toContain("Trips");
  // Family stays as an ordinary calendar.
  expect(await page.locator(".cal-row .cal-name").allTextContents()).toContain("Family");
  expect(errors).toEqual([]);
  await page.close();
});

test("a new account behind a private CA: the certificate error opens the CA field; with the PEM it is added", async () => {
  const { page } = await open();
  await page.click("#add-calendar");
  await page.click("#add-calendar-caldav");
  await page.fill("#dav-url", "https://self-signed.example/");
  await page.fill("#dav-user", "alice");
  await page.fill("#dav-password", "app-password");
  expect(await page.locator("#dav-ca-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  await page.click("#dav-next");
  await page.waitForSelector("#dav-error:not([hidden])");
  expect(await page.textContent("#dav-error")).toContain("Certificate authority");
  expect(await page.locator("#dav-ca-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
  await page.fill("#dav-ca", "not a certificate");
  await page.click("#dav-next");
  await page.waitForFunction(() => document.activeElement?.id === "dav-ca");
  // In plain words, the checker's own below, never the field's code name.
  expect(await page.textContent("#dav-error")).toMatch(/^Kairos cannot read a certificate/);
  expect(await page.textContent("#dav-error-detail")).toContain("block in it");
  const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  await page.fill("#dav-ca", pem);
  await page.click("#dav-next");
  await page.waitForSelector('#caldav-dialog[data-step="choose"]');
  const found = await waitForCall(page, "caldav_discover");
  expect(found.args.request).toMatchObject({ ca_pem: pem });
  await page.click("#dav-next");
  const add = await waitForCall(page, "add_caldav_account");
  expect(add.args.request).toMatchObject({ ca_pem: pem });
  await page.close();
});

test("edit: a new CA certificate, checked first (a bad one opens the field); then back to the usual authorities", async () => {
  const { page, errors } = await open("caldav=1");
  const good = page.locator(".dav-account", { hasText: "alice · dav.example.com" });
  await good.waitFor();
  await good.locator(".dav-edit").click();
  await page.waitForSelector("#caldav-edit-dialog");
  // No CA yet: nothing to remove.
  expect(await page.locator("#dav-no-ca").count()).toBe(0);
  expect(await page.locator("#dav-new-ca-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  await page.click("#dav-new-ca-details summary");
  await page.fill("#dav-new-ca", "not a certificate");
  await page.click("#dav-save");
  await page.waitForSelector("#dav-edit-error:not([hidden])");
  expect(await page.getAttribute("#dav-new-ca", "aria-invalid")).toBe("true");
  expect(await page.textContent("#dav-edit-error")).toMatch(/^Kairos cannot read a certificate/);
  expect(await page.textContent("#dav-edit-detail")).toContain("block in it");
  expect(await page.locator("#caldav-edit-dialog").isVisible()).toBe(true);
  const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  await page.fill("#dav-new-ca", pem);
  await page.click("#dav-save");
  // The refused one was call 1.
  const call = await waitForCall(page, "edit_caldav_account", 2);
  expect(call.args.request).toMatchObject({ ca_pem: pem, every_seconds: null, password: null });
  await page.waitForSelector("#caldav-edit-dialog", { state: "detached" });

  // Now it has one: "trust only the usual authorities" is offered.
  await good.locator(".dav-edit").click();
  await page.waitForSelector("#dav-ca-note");
  await page.click("#dav-new-ca-details summary");
  await page.check("#dav-no-ca");
  await page.click("#dav-save");
  const drop = await waitForCall(page, "edit_caldav_account", 3);
  expect(drop.args.request).toMatchObject({ no_ca: true });
  expect(drop.args.request).not.toHaveProperty("ca_pem");
  await page.waitForSelector("#caldav-edit-dialog", { state: "detached" });
  expect(errors).toEqual([]);
  await page.close();
});

test("简体中文: the edit dialog", async () => {
  const { page } = await open("caldav=1&lang=zh-CN");
  const good = page.locator(".dav-account", { hasText: "alice · dav.example.com" });
  await good.waitFor();
  expect(await good.locator(".dav-edit").textContent()).toBe("编辑");
  await good.locator(".dav-edit").click();
  await page.waitForSelector("#caldav-edit-dialog");
  expect(await page.textContent("#dav-refresh")).toBe("刷新列表");
  expect(await page.locator("#dav-every option").allTextContents()).toContain("5 分钟");
  expect(await page.textContent("#dav-new-ca-details .hint")).toContain("自签名证书");
  await page.close();
});
