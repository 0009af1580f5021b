/** Tasks: the sidebar list, ticking one off, the task editor, tasks in the views. */
import { expect, test } from "vitest";
import type { Page } from "playwright-core";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

const listed = (page: Page): Promise<string[]> =>
  page.locator("#task-list .task-title").evaluateAll((ns) => ns.map((n) => n.textContent ?? ""));

test("open tasks are listed due soonest, overdue marked; done ones are not listed", async () => {
  const { page } = await open();
  await page.waitForSelector('#task-list .task-row[data-uid="rent"]');
  expect(await listed(page)).toEqual(["Pay rent", "Renew passport", "Read a book"]);
  expect(await page.getAttribute('.task-row[data-uid="rent"]', "class")).toContain("overdue");
  expect(await page.textContent('.task-row[data-uid="rent"] .task-due')).toMatch(/^Overdue · Due /);
  expect(await page.getAttribute('.task-row[data-uid="passport"] .task-prio', "class")).toContain("high");
  await page.close();
});

test("ticking a task off completes it and it leaves the list", async () => {
  const { page } = await open();
  await page.waitForSelector('.task-row[data-uid="rent"]');
  await page.click('.task-row[data-uid="rent"] .task-done');
  const c = await waitForCall(page, "complete_task");
  expect(c.args).toEqual({ event: { calendar_id: 2, uid: "rent", recurrence_id: null } });
  await page.waitForSelector('.task-row[data-uid="rent"]', { state: "detached" });
  expect(await listed(page)).toEqual(["Renew passport", "Read a book"]);
  await page.close();
});

test("a new task: due field, priority and done; no end; saved as a task", async () => {
  const { page } = await open();
  await page.click("#add-task");
  await page.waitForSelector("#editor");
  expect(await page.getAttribute("#editor", "aria-label")).toBe("New task");
  expect(await page.isHidden("#ev-end")).toBe(true);
  await page.fill("#ev-title", "Call the bank");
  await page.selectOption("#ev-priority", "5");
  await page.click("#ev-save");
  const save = await waitForCall(page, "save_event");
  expect(save.args.request).toMatchObject({ event: null, draft: { title: "Call the bank", task: { done: false, priority: 5 } } });
  const d = (save.args.request as { draft: { start: string; end: string } }).draft;
  expect(d.start).toMatch(/T17:00$/);
  expect(d.end).toBe(d.start);
  await page.waitForFunction(() => [...document.querySelectorAll("#task-list .task-title")].some((n) => n.textContent === "Call the bank"));
  await page.close();
});

test("a task opened from the list keeps its exact priority; reopening a done one from the view", async () => {
  const { page } = await open();
  await page.click('.task-row[data-uid="passport"] .task-open');
  await page.waitForSelector("#editor");
  expect(await page.getAttribute("#editor", "aria-label")).toBe("Edit task");
  expect(await page.inputValue("#ev-priority")).toBe("1");
  expect(await page.isChecked("#ev-task-done")).toBe(false);
  await page.check("#ev-task-done");
  await page.click("#ev-save");
  const save = await waitForCall(page, "save_event");
  expect(save.args.request).toMatchObject({ draft: { task: { done: true, priority: 1 } } });
  await page.waitForSelector('.task-row[data-uid="passport"]', { state: "detached" });
  expect((await calls(page, "list_tasks")).length).toBeGreaterThan(1);
  await page.close();
});
