/** ICS subscriptions: "Add calendar → From URL…", the calendar list's feed status, read-only events. */
import { expect, test } from "vitest";
import { useApp, waitForCall } from "./harness";

const open = useApp();

test("subscribing from a URL adds the calendar, its status and its event", async () => {
  const { page, errors } = await open();
  await page.click("#add-calendar");
  await page.click("#add-calendar-url");
  await page.waitForSelector("#subscribe-dialog");
  await page.fill("#sub-url", "webcal://calendar.example.org/standup.ics");
  await page.fill("#sub-name", "Team");
  await page.selectOption("#sub-every", "30");
  await page.click("#sub-save");
  const call = await waitForCall(page, "add_subscription");
  expect(call.args.request).toEqual({ url: "webcal://calendar.example.org/standup.ics", calendar: "Team", every_minutes: 30 });
  await page.waitForSelector("#subscribe-dialog", { state: "detached" });
  const row = page.locator(".cal-row.is-feed", { hasText: "Team" });
  await row.waitFor();
  expect(await row.locator(".feed-when").textContent()).toMatch(/^Refreshed ([A-Z][a-z]{2} )?\d/);
  expect(await row.locator(".feed-error").count()).toBe(0);
  expect(await row.locator(".feed-status").getAttribute("title")).toContain("https://calendar.example.org/standup.ics");
  // The feed's event (tomorrow) is in the agenda view.
  await page.click('[data-view="agenda"]');
  await page.waitForSelector('.fc-list-event:has-text("Standup")');
  expect(errors).toEqual([]);
  await page.close();
});

test("a first fetch that fails shows plain words in the dialog and adds nothing", async () => {
  const { page } = await open();
  const before = await page.locator(".cal-row").count();
  await page.click("#add-calendar");
  await page.click("#add-calendar-url");
  await page.fill("#sub-url", "https://calendar.example.org/html/x.ics");
  await page.click("#sub-save");
  await page.waitForSelector("#sub-error:not([hidden])");
  expect(await page.textContent("#sub-error")).toBe("The address did not give a calendar (a web page, an empty or unreadable answer).");
  expect(await page.textContent("#sub-error-detail")).toContain("web page (HTML)");
  expect(await page.getAttribute("#sub-url", "aria-invalid")).toBe("true");
  // Not a URL at all.
  await page.fill("#sub-url", "calendar.example.org/x.ics");
  await page.click("#sub-save");
  await page.waitForFunction(() => document.querySelector("#sub-error")?.textContent?.startsWith("That is not a calendar address"));
  // The dialog stays open for another try; nothing was added.
  expect(await page.locator("#subscribe-dialog").count()).toBe(1);
  await page.click('#subscribe-dialog button:has-text("Cancel")');
  expect(await page.locator(".cal-row").count()).toBe(before);
  await page.close();
});

test("the calendar list shows a feed's last error; Refresh now and Unsubscribe", async () => {
  const { page } = await open("feeds=1");
  const school = page.locator(".cal-row.is-feed", { hasText: "School" });
  await school.waitFor();
  expect(await school.locator(".feed-when").textContent()).toMatch(/^Refresh failed ([A-Z][a-z]{2} )?\d/);
  expect(await school.locator(".feed-error").textContent()).toBe("Not a calendar (web page or empty)");
  expect(await school.locator(".feed-status").getAttribute("title")).toMatch(/did not give a calendar[\s\S]*web page \(HTML\)[\s\S]*Showing the copy from/);
  const rota = page.locator(".cal-row.is-feed", { hasText: "Team rota" });
  expect(await rota.locator(".feed-error").count()).toBe(0);

  // The server is fixed: Refresh now clears the error.
  await page.evaluate(() => {
    const s = window.__kairos.fake.feeds.subs.find((x) => x.calendar === "School");
    if (s) s.url = "https://school.example.org/term.ics";
  });
  await school.locator(".feed-refresh").click();
  const r = await waitForCall(page, "refresh_subscription");
  expect(typeof r.args.calendar_id).toBe("number");
  await page.waitForFunction(() => !document.querySelector(".cal-row.is-feed .feed-error"));

  // A refresh by the host in the background that failed: the shell says data changed.
  await page.evaluate(async () => {
    const f = window.__kairos.fake.feeds;
    const s = f.subs.find((x) => x.calendar === "Team rota");
    if (s) {
      s.url = "https://calendar.example.org/404/rota.ics";
      f.refresh(s.calendar_id);
    }
    await window.__kairos.emit("kairos://data-changed");
  });
  await rota.locator(".feed-error").waitFor();
  expect(await rota.locator(".feed-error").textContent()).toBe("Server error (HTTP 404)");

  // Unsubscribe (confirmed in place): the calendar stays, without a status.
  await rota.locator(".feed-remove").click();
  await page.click("#confirm-ok");
  await waitForCall(page, "remove_subscription");
  await page.waitForFunction(() => [...document.querySelectorAll(".cal-row")].some((r) => r.textContent?.includes("Team rota") && !r.classList.contains("is-feed")));
  await page.close();
});

test("an event of a subscribed calendar opens read-only and says why", async () => {
  const { page } = await open("feeds=1");
  await page.click('[data-view="agenda"]');
  await page.click('.fc-list-event:has-text("Rota")');
  await page.waitForSelector("#editor #ev-readonly");
  expect(await page.textContent("#ev-readonly")).toContain("read-only: the next refresh would replace any change");
  expect(await page.locator("#ev-title").isDisabled()).toBe(true);
  expect(await page.locator("#ev-save").isHidden()).toBe(true);
  expect(await page.locator("#ev-delete").isHidden()).toBe(true);
  // A new event cannot be put into a subscribed calendar.
  await page.keyboard.press("Escape");
  await page.click("#new-event");
  await page.waitForSelector("#editor #ev-calendar");
  const names = await page.locator("#ev-calendar option").allTextContents();
  expect(names).not.toContain("Team rota");
  expect(names).not.toContain("School");
  await page.close();
});

test("简体中文: the dialog and the status in Chinese", async () => {
  const { page } = await open("feeds=1&lang=zh-CN");
  const school = page.locator(".cal-row.is-feed", { hasText: "School" });
  await school.waitFor();
  expect(await school.locator(".feed-error").textContent()).toBe("不是日历（网页或空白）");
  expect(await school.locator(".feed-refresh").textContent()).toBe("立即刷新");
  await page.click("#add-calendar");
  expect(await page.textContent("#add-calendar-url")).toBe("从网址订阅…");
  await page.close();
});
