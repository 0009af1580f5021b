/**
 * The built UI in Debian's Chromium with the backend faked: views, the
 * editor's save_event payload, drag → move_event deltas, validation errors.
 */
import { expect, test } from "vitest";
import type { Page } from "playwright-core";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

test("month view renders the fake's events with their calendar colours and data-uid", async () => {
  const { page, errors } = await open();
  const review = page.locator('.fc-dayGridMonth-view [data-uid="design-review"]');
  await review.waitFor();
  expect(await review.textContent()).toContain("Design review");
  expect(await page.locator('[data-uid="standup"]').count()).toBeGreaterThan(3);
  expect(await page.locator(".cal-row").count()).toBe(3);
  expect(await page.textContent("#view-title")).toMatch(/\d{4}/);
  expect(await page.getAttribute('[data-view="month"]', "aria-pressed")).toBe("true");
  // The backend's wall times go in unconverted: a 14:00 event shows 2pm.
  expect(await review.textContent()).toMatch(/2:00\s*pm/i);
  expect(errors).toEqual([]);
  await page.close();
});

test("view buttons, prev/next/today and keyboard shortcuts", async () => {
  const { page } = await open();
  const title = async (): Promise<string> => (await page.textContent("#view-title")) ?? "";
  const first = await title();
  await page.click("#next");
  await page.waitForFunction((t) => document.querySelector("#view-title")?.textContent !== t, first);
  await page.click("#today");
  await page.waitForFunction((t) => document.querySelector("#view-title")?.textContent === t, first);
  await page.click('[data-view="week"]');
  await page.waitForSelector(".fc-timeGridWeek-view");
  await page.keyboard.press("d");
  await page.waitForSelector(".fc-timeGridDay-view");
  await page.keyboard.press("a");
  await page.waitForSelector(".fc-list");
  await page.keyboard.press("m");
  await page.waitForSelector(".fc-dayGridMonth-view");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction((t) => document.querySelector("#view-title")?.textContent !== t, first);
  await page.keyboard.press("t");
  await page.waitForFunction((t) => document.querySelector("#view-title")?.textContent === t, first);
  await page.keyboard.press("?");
  await page.waitForSelector("#shortcuts-help");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#shortcuts-help", { state: "detached" });
  await page.keyboard.press("n");
  await page.waitForSelector("#editor");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#editor", { state: "detached" });
  await page.close();
});

/** Sets a <select> by value and fires its events. */
async function choose(page: Page, selector: string, value: string): Promise<void> {
  await page.selectOption(selector, value);
}

test("create an event with a reminder through the editor: the save_event payload", async () => {
  const { page } = await open();
  await page.click("#new-event");
  await page.waitForSelector("#editor");
  // new_draft was asked for the default calendar and carries its default reminder.
  const draftCall = await waitForCall(page, "new_draft");
  expect(draftCall.args.calendar_id).toBe(1);
  expect(await page.locator(".alarm-row").count()).toBe(1);

  const day = ((await page.inputValue("#ev-start")) ?? "").slice(0, 10);
  await page.fill("#ev-title", "Planning poker");
  await choose(page, "#ev-calendar", "2");
  await page.fill("#ev-start", `${day}T10:00`);
  await page.fill("#ev-end", `${day}T11:30`);
  await page.fill("#ev-location", "Room 7");
  await page.fill("#ev-notes", "Bring cards");
  await choose(page, "#ev-repeat", "weekly");
  await page.click("#ev-add-alarm");
  const row = page.locator(".alarm-row").nth(1);
  await row.locator(".alarm-kind").selectOption("after");
  await row.locator(".alarm-minutes").fill("5");
  await row.locator(".alarm-related").selectOption("end");
  await page.click("#ev-add-alarm");
  const at = page.locator(".alarm-row").nth(2);
  await at.locator(".alarm-kind").selectOption("at");
  await at.locator(".alarm-at").fill(`${day}T08:00`);
  await page.click("#ev-save");

  const save = await waitForCall(page, "save_event");
  const weekday = await page.evaluate((d) => ["SU", "MO", "TU", "WE", "TH", "FR", "SA"][new Date(`${d}T00:00:00Z`).getUTCDay()], day);
  expect(save.args).toEqual({
    request: {
      event: null,
      scope: "all",
      draft: {
        calendar_id: 2,
        title: "Planning poker",
        all_day: false,
        start: `${day}T10:00`,
        end: `${day}T11:30`,
        tz: "Europe/Berlin",
        location: "Room 7",
        notes: "Bring cards",
        rrule: `FREQ=WEEKLY;BYDAY=${weekday}`,
        alarms: [
          { kind: "before", minutes: 10, related: "start" },
          { kind: "before", minutes: -5, related: "end" },
          { kind: "at", at: `${day}T08:00` },
        ],
        task: null,
      },
    },
  });
  await page.waitForSelector("#editor", { state: "detached" });
  await page.locator('[data-uid="fake-100"]').first().waitFor();
  await page.close();
});

test("an all-day event sends dates, the end being the last day", async () => {
  const { page } = await open();
  await page.click("#new-event");
  await page.waitForSelector("#editor");
  const day = (await page.inputValue("#ev-start")).slice(0, 10);
  await page.fill("#ev-title", "Holiday");
  await page.check("#ev-allday");
  expect(await page.getAttribute("#ev-start", "type")).toBe("date");
  await page.fill("#ev-end", day);
  await page.click("#ev-save");
  const save = await waitForCall(page, "save_event");
  const draft = (save.args.request as { draft: Record<string, unknown> }).draft;
  expect(draft).toMatchObject({ all_day: true, start: day, end: day, rrule: null });
  await page.close();
});

test("a backend validation error shows in the dialog, naming the field", async () => {
  const { page } = await open();
  await page.click("#new-event");
  await page.waitForSelector("#editor");
  const day = (await page.inputValue("#ev-start")).slice(0, 10);
  await page.fill("#ev-start", `${day}T15:00`);
  await page.fill("#ev-end", `${day}T14:00`);
  await page.click("#ev-save");
  await page.waitForSelector("#ev-error:not([hidden])");
  expect(await page.textContent("#ev-error")).toBe("End: before the start");
  expect(await page.getAttribute("#ev-end", "aria-invalid")).toBe("true");
  expect(await page.isVisible("#editor")).toBe(true);

  // An error the UI cannot foresee, injected into the fake.
  await page.fill("#ev-end", `${day}T16:00`);
  await page.evaluate(() => window.__kairos.fake.failNext("save_event", { kind: "invalid", message: "title: longer than 1000 characters" }));
  await page.click("#ev-save");
  await page.waitForFunction(() => document.querySelector("#ev-error")?.textContent?.startsWith("Title:"));
  expect(await page.getAttribute("#ev-title", "aria-invalid")).toBe("true");
  expect(await page.getAttribute("#ev-end", "aria-invalid")).toBeNull();

  // A bad custom rule.
  await choose(page, "#ev-repeat", "custom");
  await page.fill("#ev-rrule", "every tuesday");
  await page.click("#ev-save");
  await page.waitForFunction(() => document.querySelector("#ev-error")?.textContent?.startsWith("Repeat:"));
  expect(await calls(page, "save_event")).toHaveLength(3);
  await page.close();
});

/** Drags from the centre of `from` by (dx, dy) pixels in small steps. */
async function drag(page: Page, selector: string, dx: number, dy: number, grab: "centre" | "bottom" = "centre"): Promise<void> {
  const box = await page.locator(selector).first().boundingBox();
  if (!box) throw new Error(`${selector} has no box`);
  const x = box.x + box.width / 2;
  const y = grab === "bottom" ? box.y + box.height - 2 : box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx / 2, y + dy / 2, { steps: 8 });
  await page.mouse.move(x + dx, y + dy, { steps: 8 });
  await page.mouse.up();
}

test("drag and resize in the week view call move_event with wall-clock deltas", async () => {
  const { page } = await open();
  await page.click('[data-view="week"]');
  const ev = '.fc-timeGridWeek-view [data-uid="design-review"]';
  await page.locator(ev).waitFor();
  const slot = (await page.locator(".fc-timegrid-slot-lane").first().boundingBox())?.height ?? 0;
  expect(slot).toBeGreaterThan(10);

  await drag(page, ev, 0, slot * 2);
  const move = await waitForCall(page, "move_event");
  expect(move.args).toEqual({
    request: { event: { calendar_id: 1, uid: "design-review", recurrence_id: null }, scope: "all", start_delta_minutes: 60, end_delta_minutes: 60 },
  });

  // Resize: the end handle, one slot down.
  await page.waitForFunction(() => !document.querySelector(".fc-event-dragging"));
  await page.locator(ev).first().hover();
  const handle = `${ev} .fc-event-resizer-end`;
  await page.locator(handle).waitFor();
  await drag(page, handle, 0, slot, "centre");
  const resize = await waitForCall(page, "move_event", 2);
  expect(resize.args.request).toMatchObject({ start_delta_minutes: 0, end_delta_minutes: 30 });
  await page.close();
});

test("dragging an occurrence of a series asks which ones move", async () => {
  const { page } = await open();
  await page.click('[data-view="day"]');
  // The standup repeats on weekdays: step forward to one.
  const ev = "standup";
  for (let i = 0; i < 3 && !(await page.$(`.fc-timeGridDay-view [data-uid="${ev}"]`)); i++) {
    const asked = (await calls(page, "occurrences")).length;
    await page.click("#next");
    await waitForCall(page, "occurrences", asked + 1);
    await page.waitForSelector('#calendar[data-loading="0"]');
  }
  await page.locator(`.fc-timeGridDay-view [data-uid="${ev}"]`).waitFor();
  const sel = `.fc-timeGridDay-view [data-uid="${ev}"]`;
  const slot = (await page.locator(".fc-timegrid-slot-lane").first().boundingBox())?.height ?? 0;
  await drag(page, sel, 0, slot * 2);
  await page.waitForSelector("#scope-dialog");
  await page.click('#scope-dialog [data-scope="this"]');
  const move = await waitForCall(page, "move_event");
  const req = move.args.request as { scope: string; event: { recurrence_id: string | null }; start_delta_minutes: number };
  expect(req.scope).toBe("this");
  expect(req.event.recurrence_id).toMatch(/T09:30:00$/);
  expect(req.start_delta_minutes).toBe(60);
  await page.close();
});
