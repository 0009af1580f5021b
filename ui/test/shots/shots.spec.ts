/**
 * Screenshots of the mocked UI for a person to look at (not assertions):
 * `npm run shots` writes them to $SHOTS_DIR (default /tmp/ui-shots).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, test } from "vitest";
import { useApp } from "../browser/harness";

const DIR = process.env.SHOTS_DIR ?? "/tmp/ui-shots";
const open = useApp();

beforeAll(() => {
  mkdirSync(DIR, { recursive: true });
});

test("screenshots", async () => {
  const { page } = await open();
  await page.screenshot({ path: join(DIR, "month.png") });
  await page.click('[data-view="week"]');
  await page.waitForSelector(".fc-timeGridWeek-view");
  await page.screenshot({ path: join(DIR, "week.png") });
  await page.click('[data-view="agenda"]');
  await page.waitForSelector(".fc-list");
  await page.screenshot({ path: join(DIR, "agenda.png") });
  await page.click('[data-view="month"]');
  await page.click("#new-event");
  await page.waitForSelector("#editor");
  await page.fill("#ev-title", "Planning poker");
  await page.click("#ev-add-alarm");
  await page.locator("#ev-alarms .alarm-row").last().locator(".alarm-again").selectOption("5");
  await page.screenshot({ path: join(DIR, "editor.png") });
  await page.keyboard.press("Escape");
  await page.click('.task-row[data-uid="passport"] .task-open');
  await page.waitForSelector("#editor");
  await page.screenshot({ path: join(DIR, "task-editor.png") });
  await page.keyboard.press("Escape");
  await page.click('.fc-dayGridMonth-view [data-uid="design-review"]');
  await page.waitForSelector("#editor #ev-history");
  await page.locator("#ev-history").scrollIntoViewIfNeeded();
  await page.locator("#editor").screenshot({ path: join(DIR, "event-history.png") });
  await page.keyboard.press("Escape");
  await page.click("#reminders-btn");
  await page.waitForSelector(".reminder-row");
  await page.screenshot({ path: join(DIR, "reminders.png") });
  await page.click("#settings-btn");
  await page.waitForSelector("#settings");
  await page.screenshot({ path: join(DIR, "settings.png") });
  await page.keyboard.press("Escape");
  await page.click("#import-ics");
  await page.waitForSelector("#import-dialog");
  await page.fill("#import-calendar", "Messy");
  await page.click("#import-go");
  await page.waitForSelector("#import-result");
  await page.screenshot({ path: join(DIR, "import-warnings.png") });
  await page.click("#import-done");

  await page.keyboard.press("Escape");
  await page.click('.cal-row[data-calendar-id="1"] .cal-edit');
  await page.waitForSelector("#calendar-dialog");
  await page.screenshot({ path: join(DIR, "calendar-dialog.png") });
  await page.keyboard.press("Escape");
  await page.locator('[data-uid="standup"]').first().click();
  await page.waitForSelector("#editor");
  await page.click("#ev-delete");
  await page.waitForSelector("#scope-dialog");
  await page.screenshot({ path: join(DIR, "scope.png") });

  const dark = await open("", { colorScheme: "dark" });
  await dark.page.click('[data-view="week"]');
  await dark.page.waitForSelector(".fc-timeGridWeek-view");
  await dark.page.screenshot({ path: join(DIR, "dark-week.png") });
  await dark.page.click('[data-view="month"]');
  await dark.page.click("#reminders-btn");
  await dark.page.screenshot({ path: join(DIR, "dark-month.png") });
  await dark.page.waitForSelector(".reminder-row");
  await dark.page.locator("#reminders-panel").screenshot({ path: join(DIR, "dark-reminders.png") });
  await dark.page.click("#reminders-btn");
  await dark.page.click("#new-event");
  await dark.page.waitForSelector("#editor");
  await dark.page.fill("#ev-start", "2026-12-02T15:00");
  await dark.page.fill("#ev-end", "2026-12-02T14:00");
  await dark.page.click("#ev-save");
  await dark.page.waitForSelector("#ev-error:not([hidden])");
  await dark.page.screenshot({ path: join(DIR, "dark-editor-error.png") });

  const zh = await open("lang=zh-CN");
  await zh.page.screenshot({ path: join(DIR, "zh-month.png") });
  await zh.page.click('.fc-dayGridMonth-view [data-uid="design-review"]');
  await zh.page.waitForSelector("#editor #ev-history");
  await zh.page.locator("#ev-history").scrollIntoViewIfNeeded();
  await zh.page.locator("#editor").screenshot({ path: join(DIR, "zh-event-history.png") });
  await zh.page.keyboard.press("Escape");
  await zh.page.click("#reminders-btn");
  await zh.page.waitForSelector(".reminder-row");
  await zh.page.screenshot({ path: join(DIR, "zh-reminders.png") });
  await zh.page.click("#reminders-btn");
  await zh.page.click("#new-event");
  await zh.page.waitForSelector("#editor");
  await zh.page.screenshot({ path: join(DIR, "zh-editor.png") });
});

test("sync settings", async () => {
  const off = await open("sync=off");
  await off.page.click("#settings-btn");
  await off.page.click("#set-tab-sync");
  await off.page.waitForSelector('#sync-panel[data-state="unpaired"]');
  await off.page.screenshot({ path: join(DIR, "sync-join.png") });
  for (const [query, name] of [["", "sync-devices.png"], ["theme=dark", "sync-devices-dark.png"], ["lang=zh-CN", "sync-devices-zh-CN.png"]] as const) {
    const { page } = await open(query);
    await page.click("#settings-btn");
    await page.click("#set-tab-sync");
    await page.waitForSelector(".device-row");
    await page.click("#sync-add");
    await page.waitForSelector(".sync-qr svg");
    await page.click('.device-row[data-device="d-phone"] .device-revoke');
    await page.screenshot({ path: join(DIR, name) });
  }
});
