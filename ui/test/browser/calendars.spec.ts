/** The calendars sidebar and ICS import/export, against the fake. */
import { expect, test } from "vitest";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

test("hiding a calendar saves it invisible and its events leave the view", async () => {
  const { page } = await open();
  await page.waitForSelector('[data-uid="design-review"]');
  await page.uncheck('.cal-row[data-calendar-id="1"] .cal-visible');
  const save = await waitForCall(page, "save_calendar");
  expect(save.args.input).toMatchObject({ id: 1, name: "Work", visible: false });
  await page.waitForSelector('[data-uid="design-review"]', { state: "detached" });
  expect(await page.locator('[data-uid="lunch"]').count()).toBeGreaterThan(0);
  await page.close();
});

test("add a calendar with default reminders; a duplicate name is refused, naming the field", async () => {
  const { page } = await open();
  await page.click("#add-calendar");
  await page.click("#add-calendar-new");
  await page.waitForSelector("#calendar-dialog");
  await page.fill("#cal-name", "Work");
  await page.click("#cal-save");
  await page.waitForSelector("#cal-error:not([hidden])");
  expect(await page.textContent("#cal-error")).toMatch(/^Name: a calendar called "Work" exists already/);

  await page.fill("#cal-name", "Sport");
  await page.click("#cal-add-alarm");
  // Calendar defaults have no date, so no "at a time" kind.
  expect(await page.locator("#calendar-dialog .alarm-kind option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(["before", "after"]);
  await page.locator("#calendar-dialog .alarm-minutes").fill("30");
  await page.click("#cal-save");
  const save = await waitForCall(page, "save_calendar", 2);
  expect(save.args.input).toMatchObject({ id: null, name: "Sport", visible: true, default_alarms: [{ kind: "before", minutes: 30, related: "start" }] });
  expect(save.args.input).toHaveProperty("color", expect.stringMatching(/^#[0-9a-f]{6}$/));
  await page.waitForSelector("#calendar-dialog", { state: "detached" });
  await page.waitForFunction(() => [...document.querySelectorAll(".cal-name")].some((n) => n.textContent === "Sport"));
  await page.close();
});

test("the working week and the holiday flag are saved with the calendar", async () => {
  const { page } = await open();
  await page.click('.cal-row[data-calendar-id="2"] .cal-edit');
  await page.waitForSelector("#calendar-dialog");
  const ticked = (): Promise<string[]> =>
    page.locator("#cal-work-week .work-day").evaluateAll((bs) => bs.filter((b) => (b as HTMLInputElement).checked).map((b) => (b as HTMLElement).dataset.day ?? ""));
  expect(await ticked()).toEqual(["0", "1", "2", "3", "4"]);
  // Sunday to Thursday; a holiday calendar.
  await page.uncheck('#cal-work-week .work-day[data-day="4"]');
  await page.check('#cal-work-week .work-day[data-day="6"]');
  await page.check("#cal-holidays");
  await page.click("#cal-save");
  const save = await waitForCall(page, "save_calendar");
  expect(save.args.input).toMatchObject({ id: 2, work_week: 0b100_1111, holidays: true });
  await page.waitForSelector("#calendar-dialog", { state: "detached" });
  // No working day at all is refused, naming the field.
  await page.click('.cal-row[data-calendar-id="2"] .cal-edit');
  await page.waitForSelector("#calendar-dialog");
  for (const d of ["0", "1", "2", "3", "6"]) await page.uncheck(`#cal-work-week .work-day[data-day="${d}"]`);
  await page.click("#cal-save");
  await page.waitForSelector("#cal-error:not([hidden])");
  expect(await page.textContent("#cal-error")).toMatch(/^Working week: 0 names no weekday/);
  await page.close();
});

test("rename and delete a calendar (after confirming)", async () => {
  const { page } = await open();
  await page.click('.cal-row[data-calendar-id="3"] .cal-edit');
  await page.waitForSelector("#calendar-dialog");
  expect(await page.inputValue("#cal-name")).toBe("Family");
  await page.fill("#cal-name", "Kin");
  await page.click("#cal-save");
  expect((await waitForCall(page, "save_calendar")).args.input).toMatchObject({ id: 3, name: "Kin", default_alarms: [{ kind: "before", minutes: 1440, related: "start" }] });
  await page.waitForSelector("#calendar-dialog", { state: "detached" });

  await page.click('.cal-row[data-calendar-id="3"] .cal-edit');
  await page.click("#cal-delete");
  await page.waitForSelector("#confirm-dialog");
  await page.click("#confirm-ok");
  expect((await waitForCall(page, "delete_calendar")).args).toEqual({ id: 3 });
  await page.waitForSelector('.cal-row[data-calendar-id="3"]', { state: "detached" });
  await page.close();
});

test("ICS import: file dialog, then the calendar name", async () => {
  const { page } = await open();
  await page.click("#import-ics");
  await page.waitForSelector("#import-dialog");
  const dialog = (await calls(page, "plugin:dialog|open"))[0];
  expect(JSON.stringify(dialog?.args)).toContain("ics");
  expect(await page.textContent("#import-dialog .file-name")).toBe("holidays.ics");
  await page.fill("#import-calendar", "Holidays");
  await page.click("#import-go");
  expect((await waitForCall(page, "import_ics")).args).toEqual({ request: { path: "/home/me/holidays.ics", calendar: "Holidays" } });
  await page.waitForSelector(".toast");
  expect(await page.textContent(".toast")).toContain("Imported 3 events");
  await page.waitForFunction(() => [...document.querySelectorAll(".cal-name")].some((n) => n.textContent === "Holidays"));
  await page.close();
});

test("ICS import of a file with problems lists them: imported N events, M warnings", async () => {
  const { page } = await open();
  await page.click("#import-ics");
  await page.waitForSelector("#import-dialog");
  await page.fill("#import-calendar", "Messy");
  await page.click("#import-go");
  await page.waitForSelector("#import-result");
  expect(await page.textContent("#import-result")).toBe("Imported 3 events, 2 warnings (skipped or repaired):");
  const items = await page.$$eval("#import-warnings li", (li) => li.map((x) => x.textContent));
  expect(items).toHaveLength(2);
  expect(items[0]).toContain("line 14");
  await page.click("#import-done");
  await page.waitForSelector("#import-dialog", { state: "detached" });
  await page.close();
});

test("ICS export: one calendar, through the save dialog", async () => {
  const { page } = await open();
  await page.click("#export-ics");
  await page.waitForSelector("#export-dialog");
  await page.selectOption("#export-calendar", "2");
  await page.click("#export-go");
  expect((await waitForCall(page, "export_ics")).args).toEqual({ request: { path: "/home/me/export.ics", calendar_id: 2 } });
  const save = (await calls(page, "plugin:dialog|save"))[0];
  expect(JSON.stringify(save?.args)).toContain("Personal.ics");
  await page.waitForSelector("#export-dialog", { state: "detached" });
  await page.close();
});
