/**
 * The month grid asks the backend for a few occurrences a day (`per_day`);
 * "+N more" adds what the backend left out, and opens the day view, which
 * asks for all of them.
 */
import { expect, test } from "vitest";
import type { Page } from "playwright-core";
import type { Occurrences, RangeQuery } from "../../src/ipc/bindings";
import { addDays } from "../../src/lib/dates";
import { calls, useApp, waitForCall } from "./harness";

const open = useApp();

/** Puts `n` back-to-back half-hour events from 07:00 (uid `<prefix>-<i>`) on `day` in the fake, and has the UI fetch again. */
async function crowd(page: Page, day: string, n: number, prefix: string): Promise<void> {
  const asked = (await calls(page, "occurrences")).length;
  await page.evaluate(
    async ([day, n, prefix]) => {
      const k = window.__kairos;
      for (let i = 0; i < n; i++) {
        const at = (m: number): string => `${day}T${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
        k.fake.events.push({
          uid: `${prefix}-${i}`,
          exdates: [],
          draft: { calendar_id: 1, title: `${prefix} ${i}`, all_day: false, start: at(420 + 30 * i), end: at(450 + 30 * i), tz: "Europe/Berlin", location: "", notes: "", rrule: null, alarms: [], task: null },
        });
      }
      await k.emit("kairos://data-changed");
    },
    [day, n, prefix] as const,
  );
  await waitForCall(page, "occurrences", asked + 1);
  await page.waitForSelector('#calendar[data-loading="0"]');
}

/** What the fake answers for `range` (without logging it as the UI's call). */
function answer(page: Page, range: RangeQuery): Promise<Occurrences> {
  return page.evaluate((r) => {
    const f = window.__kairos.fake;
    const n = f.calls.length;
    const out = f.handle("occurrences", { range: r }) as Occurrences;
    f.calls.splice(n);
    return out;
  }, range);
}

/** Distinct occurrences visible in the month cell of `day` (FullCalendar keeps the ones it hides, invisible). */
function shownIn(page: Page, day: string): Promise<number> {
  return page.evaluate((d) => {
    const drawn = [...document.querySelectorAll<HTMLElement>(`td[data-date="${d}"] [data-uid]`)].filter((e) => getComputedStyle(e).visibility !== "hidden");
    return new Set(drawn.map((e) => e.dataset.uid)).size;
  }, day);
}

const today = (page: Page): Promise<string> => page.evaluate(() => (document.querySelector("td.fc-day-today") as HTMLElement).dataset.date ?? "");

// A tall window has room for 8 a cell, so it asks for more a day (see
// monthPerDay): 20 events make sure the backend still leaves some out.
for (const [width, height, n] of [
  [1280, 800, 12],
  [2560, 1440, 20],
] as const) {
  test(`${width}×${height}: a crowded day's "+N more" counts what the backend left out and opens the day view with all`, async () => {
    const { page, errors } = await open("", { viewport: { width, height } });
    const day = addDays(await today(page), 3);
    await crowd(page, day, n, "dense");

    const last = (await calls(page, "occurrences")).at(-1)?.args.range as RangeQuery;
    // The backend did leave some of that day out (the path under test).
    const capped = await answer(page, last);
    expect(capped.more.find((m) => m.date === day)?.count ?? 0).toBeGreaterThan(0);
    const all = (await answer(page, { ...last, per_day: null })).items.filter((o) => o.start.startsWith(day)).length;
    expect(all).toBeGreaterThanOrEqual(n);

    const link = page.locator(`td[data-date="${day}"] .fc-daygrid-more-link`);
    await link.waitFor();
    const shown = await shownIn(page, day);
    expect(shown).toBeGreaterThan(0);
    // One more than the cell shows arrived (so the link is drawn), and no
    // more than that: FullCalendar draws every event it gets, hidden or not.
    expect(last.per_day).toBe(shown + 2);
    expect((await link.textContent())?.trim()).toBe(`+${all - shown} more`);
    expect(await link.getAttribute("title")).toBe(`Show ${all - shown} more events`);

    const before = (await calls(page, "occurrences")).length;
    await link.click();
    await page.waitForSelector(`.fc-timeGridDay-view .fc-col-header-cell[data-date="${day}"]`);
    const dayCall = await waitForCall(page, "occurrences", before + 1);
    expect((dayCall.args.range as RangeQuery).per_day).toBeNull();
    await page.waitForSelector('#calendar[data-loading="0"]');
    await page.waitForFunction((k) => document.querySelectorAll('.fc-timeGridDay-view [data-uid^="dense-"]').length === k, n);
    expect(await page.$(".fc-popover")).toBeNull();
    expect(await page.getAttribute('[data-view="day"]', "aria-pressed")).toBe("true");
    expect(errors).toEqual([]);
    await page.close();
  });
}

test("a day whose occurrences all arrived keeps FullCalendar's popover", async () => {
  const { page, errors } = await open();
  const day = addDays(await today(page), 4);
  // Fill the day to exactly what the month asks for a day: all of it
  // arrives, and it is more than the cell shows.
  const asked = (await calls(page, "occurrences")).at(-1)?.args.range as RangeQuery;
  const there = (await answer(page, { ...asked, per_day: null })).items.filter((o) => o.start.startsWith(day)).length;
  const few = (asked.per_day ?? 0) - there;
  expect(few).toBeGreaterThan(0);
  await crowd(page, day, few, "few");
  const last = (await calls(page, "occurrences")).at(-1)?.args.range as RangeQuery;
  expect((await answer(page, last)).more.find((m) => m.date === day)).toBeUndefined();
  const all = (await answer(page, { ...last, per_day: null })).items.filter((o) => o.start.startsWith(day)).length;

  const link = page.locator(`td[data-date="${day}"] .fc-daygrid-more-link`);
  await link.waitFor();
  expect((await link.textContent())?.trim()).toBe(`+${all - (await shownIn(page, day))} more`);
  await link.click();
  await page.waitForSelector(".fc-popover");
  expect(await page.locator('.fc-popover [data-uid^="few-"]').count()).toBe(few);
  expect(await page.$(".fc-dayGridMonth-view")).not.toBeNull();
  expect(errors).toEqual([]);
  await page.close();
});
