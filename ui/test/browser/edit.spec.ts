/** Opening, editing and deleting existing events and occurrences. */
import { expect, test } from "vitest";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

test("clicking a single event opens it; saving needs no scope", async () => {
  const { page } = await open();
  await page.click('.fc-dayGridMonth-view [data-uid="design-review"]');
  await page.waitForSelector("#editor #ev-delete");
  expect(await page.inputValue("#ev-title")).toBe("Design review");
  expect(await page.inputValue("#ev-location")).toBe("Room 4");
  expect(await page.inputValue("#ev-repeat")).toBe("none");
  expect(await page.locator(".alarm-row").count()).toBe(1);
  await page.fill("#ev-title", "Design review (v2)");
  await page.click("#ev-save");
  const save = await waitForCall(page, "save_event");
  expect(save.args.request).toMatchObject({ event: { calendar_id: 1, uid: "design-review", recurrence_id: null }, scope: "all" });
  expect(await page.$("#scope-dialog")).toBeNull();
  await page.waitForFunction(() => document.querySelector('[data-uid="design-review"]')?.textContent?.includes("(v2)"));
  await page.close();
});

test("saving an occurrence of a series asks the scope; cancelling keeps the editor", async () => {
  const { page } = await open();
  await page.locator('.fc-dayGridMonth-view [data-uid="standup"]').first().click();
  await page.waitForSelector("#editor");
  expect(await page.inputValue("#ev-repeat")).toBe("weekdays");
  await page.fill("#ev-title", "Standup (moved room)");
  await page.click("#ev-save");
  await page.waitForSelector("#scope-dialog");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#scope-dialog", { state: "detached" });
  expect(await page.isVisible("#editor")).toBe(true);
  expect(await calls(page, "save_event")).toEqual([]);

  await page.click("#ev-save");
  await page.click('#scope-dialog [data-scope="this_and_following"]');
  const save = await waitForCall(page, "save_event");
  const req = save.args.request as { scope: string; event: { uid: string; recurrence_id: string | null }; draft: { rrule: string } };
  expect(req.scope).toBe("this_and_following");
  expect(req.event.uid).toBe("standup");
  expect(req.event.recurrence_id).not.toBeNull();
  // The rule was not touched, so it goes back as it came.
  expect(req.draft.rrule).toBe("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR");
  await page.close();
});

test("deleting an occurrence asks the scope", async () => {
  const { page } = await open();
  await page.locator('.fc-dayGridMonth-view [data-uid="standup"]').first().click();
  await page.click("#ev-delete");
  await page.click('#scope-dialog [data-scope="all"]');
  const del = await waitForCall(page, "delete_event");
  expect(del.args.request).toMatchObject({ scope: "all", event: { uid: "standup" } });
  await page.waitForSelector('[data-uid="standup"]', { state: "detached" });
  await page.close();
});

test("the shell's open-event opens the editor on that event", async () => {
  const { page } = await open();
  await page.evaluate(() => window.__kairos.emit("kairos://open-event", { calendar_id: 2, uid: "dentist", recurrence_id: null }));
  await page.waitForSelector("#editor");
  expect(await page.inputValue("#ev-title")).toBe("Dentist");
  expect((await waitForCall(page, "get_event")).args).toEqual({ event: { calendar_id: 2, uid: "dentist", recurrence_id: null } });
  await page.close();
});

test("the time-zone field searches the backend's zones", async () => {
  const { page } = await open();
  await page.click("#new-event");
  await page.waitForSelector("#editor");
  await page.fill("#ev-tz", "shang");
  await page.waitForSelector('.tz-list li[data-zone="Asia/Shanghai"]');
  expect(await page.locator(".tz-list li[data-zone]").count()).toBe(1);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  expect(await page.inputValue("#ev-tz")).toBe("Asia/Shanghai");
  expect(await page.isVisible("#editor")).toBe(true);
  await page.close();
});

test("a reminder that rings again every 5 minutes until dismissed, at most 3 times", async () => {
  const { page } = await open();
  await page.click("#new-event");
  await page.waitForSelector("#editor");
  await page.fill("#ev-title", "Pill");
  await page.click("#ev-add-alarm");
  const row = page.locator("#ev-alarms .alarm-row").last();
  expect(await row.locator(".alarm-again-max").isHidden()).toBe(true);
  await row.locator(".alarm-again").selectOption("5");
  await row.locator(".alarm-again-max").fill("3");
  expect(await row.locator(".alarm-label").textContent()).toContain("then every 5 minutes until dismissed (at most 3 times)");
  await page.click("#ev-save");
  const save = await waitForCall(page, "save_event");
  const alarms = (save.args.request as { draft: { alarms: unknown[] } }).draft.alarms;
  expect(alarms[alarms.length - 1]).toEqual({ kind: "before", minutes: 15, related: "start", again: { every_minutes: 5, max: 3 } });
  await page.close();
});

test("an edit that lost to another device's later edit shows in the event's sync history", async () => {
  const { page, errors } = await open();
  await page.click('.fc-dayGridMonth-view [data-uid="design-review"]');
  await page.waitForSelector("#editor #ev-history");
  const item = (await page.textContent("#ev-history li")) ?? "";
  expect(item).toContain("Edited on this device, replaced by device d_9e8d7c…'s later edit");
  expect(await page.getAttribute("#ev-history li", "title")).toBe("d_4f1c2a9b0e7d3c5a → d_9e8d7c6b5a4f3e2d");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#editor", { state: "detached" });
  // An event with nothing lost has no history section.
  await page.click('.fc-dayGridMonth-view [data-uid="lunch"]');
  await page.waitForSelector("#editor #ev-delete");
  expect(await page.locator("#ev-history").count()).toBe(0);
  expect(errors).toEqual([]);
  await page.close();

  const zh = await open("lang=zh-CN");
  await zh.page.click('.fc-dayGridMonth-view [data-uid="design-review"]');
  await zh.page.waitForSelector("#editor #ev-history");
  expect(await zh.page.textContent("#ev-history li")).toContain("在本设备上的修改，被设备 d_9e8d7c…较晚的修改取代");
  await zh.page.close();
});
