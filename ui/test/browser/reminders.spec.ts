/**
 * The reminders panel against the fake, and the shell's events; plus
 * Chinese strings and dark mode.
 */
import { expect, test } from "vitest";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

test("the panel lists active and missed reminders; snooze and dismiss call the right commands", async () => {
  const { page, errors } = await open();
  await page.waitForSelector('#reminders-btn .count:not([hidden])');
  expect(await page.textContent("#reminders-btn .count")).toBe("2");
  expect(await page.isVisible("#reminders-panel")).toBe(false);
  await page.click("#reminders-btn");
  await page.waitForSelector("#reminders-panel .reminder-row");
  const rows = page.locator(".reminder-row");
  expect(await rows.count()).toBe(2);
  expect(await page.getAttribute(".reminder-row.missed", "data-key")).toBe("yoga/1");
  expect(await page.textContent(".reminder-row.missed")).toContain("Missed");
  const active = page.locator('.reminder-row[data-key="design-review/0"]');
  expect(await active.getAttribute("class")).not.toContain("missed");

  // Snooze choices come from the settings, the default selected, plus custom.
  const options = await active.locator(".snooze-choice option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(options).toEqual(["5", "10", "15", "30", "60", "1440", "custom"]);
  expect(await active.locator(".snooze-choice").inputValue()).toBe("10");
  await active.locator(".snooze-choice").selectOption("30");
  await active.locator(".snooze-btn").click();
  expect((await waitForCall(page, "snooze")).args).toEqual({ request: { key: "design-review/0", minutes: 30 } });
  await active.waitFor({ state: "detached" });

  // Custom minutes on the missed one.
  const missed = page.locator('.reminder-row[data-key="yoga/1"]');
  await missed.locator(".snooze-choice").selectOption("custom");
  await missed.locator(".snooze-custom").fill("45");
  await missed.locator(".snooze-btn").click();
  expect((await waitForCall(page, "snooze", 2)).args).toEqual({ request: { key: "yoga/1", minutes: 45 } });
  await page.waitForSelector(".rem-empty:not([hidden])");
  await page.waitForSelector("#reminders-btn .count[hidden]", { state: "attached" });

  // The shell says reminders changed (one fired): the panel refreshes.
  await page.evaluate(async () => {
    const k = window.__kairos;
    k.fake.shown.push({
      key: "dentist/0", event: { calendar_id: 2, uid: "dentist", recurrence_id: null }, title: "Dentist", location: null,
      color: "#2a9d8f", occurrence_start: "2026-12-04T10:00:00+01:00", trigger: "2026-12-04T08:00:00Z", missed: false,
    });
    await k.emit("kairos://reminders-changed");
  });
  await page.waitForSelector('.reminder-row[data-key="dentist/0"]');
  await page.click('.reminder-row[data-key="dentist/0"] .dismiss-btn');
  expect((await waitForCall(page, "dismiss")).args).toEqual({ key: "dentist/0" });
  await page.waitForSelector('.reminder-row[data-key="dentist/0"]', { state: "detached" });
  expect(errors).toEqual([]);
  await page.close();
});

test('"Dismiss here only" calls dismiss_here (not dismiss), the row leaves, and it says what it does', async () => {
  const { page, errors } = await open();
  await page.click("#reminders-btn");
  const row = page.locator('.reminder-row[data-key="design-review/0"]');
  const here = row.locator(".dismiss-here-btn");
  expect(await here.textContent()).toBe("Dismiss here only");
  expect(await here.getAttribute("title")).toContain("other devices still remind you");
  await here.click();
  expect((await waitForCall(page, "dismiss_here")).args).toEqual({ key: "design-review/0" });
  await row.waitFor({ state: "detached" });
  expect(await calls(page, "dismiss")).toEqual([]);
  expect(await page.locator(".reminder-row").count()).toBe(1);
  expect(errors).toEqual([]);
  await page.close();

  const zh = await open("lang=zh-CN");
  await zh.page.click("#reminders-btn");
  expect(await zh.page.textContent('.reminder-row[data-key="yoga/1"] .dismiss-here-btn')).toBe("仅在此设备关闭");
  await zh.page.close();
});

test("Dismiss all; the shell's show-reminders event opens the panel; Escape and r close/toggle it", async () => {
  const { page } = await open();
  await page.evaluate(() => window.__kairos.emit("kairos://show-reminders"));
  await page.waitForSelector("#reminders-panel .reminder-row");
  await page.click("#dismiss-all");
  await waitForCall(page, "dismiss_all");
  await page.waitForSelector(".reminder-row", { state: "detached" });
  await page.keyboard.press("Escape");
  await page.waitForSelector("#reminders-panel", { state: "hidden" });
  await page.keyboard.press("r");
  await page.waitForSelector("#reminders-panel", { state: "visible" });
  expect(await calls(page, "snooze")).toEqual([]);
  await page.close();
});

test("a window made to show reminders opens the panel once the UI listens (ui_ready)", async () => {
  const { page, errors } = await open("pending=reminders");
  await page.waitForSelector("#reminders-panel .reminder-row");
  expect((await calls(page, "ui_ready")).length).toBe(1);
  expect(errors).toEqual([]);
  await page.close();
});

test("a bad custom snooze is refused in the UI", async () => {
  const { page } = await open();
  await page.click("#reminders-btn");
  const row = page.locator('.reminder-row[data-key="yoga/1"]');
  await row.locator(".snooze-choice").selectOption("custom");
  await row.locator(".snooze-custom").fill("0");
  await row.locator(".snooze-btn").click();
  await page.waitForSelector(".toast-error");
  expect(await calls(page, "snooze")).toEqual([]);
  await page.close();
});

test("zh-CN: from the setting and from the system language", async () => {
  const { page } = await open("lang=zh-CN");
  expect(await page.textContent("#today")).toBe("今天");
  expect(await page.textContent('[data-view="month"]')).toBe("月");
  expect(await page.textContent("#new-event")).toContain("新建日程");
  expect(await page.getAttribute("html", "lang")).toBe("zh-CN");
  expect(await page.textContent("#view-title")).toMatch(/\d{4}年\d{1,2}月/);
  await page.click("#reminders-btn");
  expect(await page.textContent(".reminder-row.missed .missed-badge")).toBe("已错过");
  await page.close();

  const auto = await open("", { locale: "zh-CN" });
  expect(await auto.page.textContent("#today")).toBe("今天");
  await auto.page.close();
});

test("switching the language in settings rebuilds the window in Chinese", async () => {
  const { page } = await open();
  await page.click("#settings-btn");
  await page.waitForSelector("#settings");
  await page.selectOption("#set-language", "zh-CN");
  await page.click("#set-save");
  const saved = await waitForCall(page, "save_settings");
  expect((saved.args.settings as { language: string }).language).toBe("zh-CN");
  await page.waitForFunction(() => document.querySelector("#today")?.textContent === "今天");
  await page.waitForSelector('[data-uid="design-review"]');
  await page.close();
});

const bg = (page: import("playwright-core").Page): Promise<string> => page.evaluate(() => getComputedStyle(document.body).backgroundColor);

test("dark mode follows the OS unless the theme setting overrides it", async () => {
  const dark = await open("", { colorScheme: "dark" });
  expect(await bg(dark.page)).toBe("rgb(27, 27, 29)");
  await dark.page.emulateMedia({ colorScheme: "light" });
  await dark.page.waitForFunction(() => getComputedStyle(document.body).backgroundColor === "rgb(255, 255, 255)");
  await dark.page.emulateMedia({ colorScheme: "dark" });
  await dark.page.waitForFunction(() => getComputedStyle(document.body).backgroundColor === "rgb(27, 27, 29)");
  await dark.page.close();

  const forcedLight = await open("theme=light", { colorScheme: "dark" });
  expect(await bg(forcedLight.page)).toBe("rgb(255, 255, 255)");
  await forcedLight.page.close();
  const forcedDark = await open("theme=dark", { colorScheme: "light" });
  expect(await bg(forcedDark.page)).toBe("rgb(27, 27, 29)");
  await forcedDark.page.close();
});
