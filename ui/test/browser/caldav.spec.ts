/** CalDAV accounts: "Add calendar → CalDAV account…" (sign in, choose calendars), the accounts' status in the sidebar, Sync now, Remove. */
import { expect, test } from "vitest";
import { useApp, waitForCall } from "./harness";

const open = useApp();

const busy = "#caldav-dialog.is-busy";

test("sign in, choose calendars, add: every state of the dialog, then the first sync in the background", async () => {
  const { page, errors } = await open();
  await page.click("#add-calendar");
  await page.click("#add-calendar-caldav");
  await page.waitForSelector('#caldav-dialog[data-step="login"]');
  expect(await page.locator("#dav-back").isHidden()).toBe(true);
  await page.fill("#dav-url", "https://dav.example.com/");
  await page.fill("#dav-user", "alice");
  await page.fill("#dav-password", "app-password");

  // Discovery in flight: a status line, the buttons disabled.
  await page.evaluate(() => window.__kairos.fake.held.add("caldav_discover"));
  await page.click("#dav-next");
  await page.waitForSelector(busy);
  expect(await page.textContent("#dav-progress")).toBe("Looking for calendars…");
  expect(await page.locator("#dav-next").isDisabled()).toBe(true);
  const call = await waitForCall(page, "caldav_discover");
  expect(call.args.request).toEqual({ url: "https://dav.example.com/", user: "alice", password: "app-password" });
  await page.evaluate(() => window.__kairos.fake.release());

  // The calendars, with colours; those holding events ticked.
  await page.waitForSelector('#caldav-dialog[data-step="choose"]');
  expect(await page.locator(busy).count()).toBe(0);
  expect(await page.locator("#dav-progress").isHidden()).toBe(true);
  expect(await page.locator(".dav-cal-name").allTextContents()).toEqual(["Work", "Family", "Chores"]);
  expect(await page.locator(".dav-holds").allTextContents()).toEqual(["Events and tasks", "Events", "Tasks"]);
  expect(await page.locator("input.dav-pick").evaluateAll((b) => b.map((x) => (x as HTMLInputElement).checked))).toEqual([true, true, false]);
  expect(await page.locator(".dav-swatch").first().evaluate((e) => (e as HTMLElement).style.background)).toBe("rgb(58, 134, 255)");
  expect(await page.textContent("#dav-next")).toBe("Add account");
  // Nothing chosen: nothing to add.
  await page.locator("input.dav-pick").nth(0).uncheck();
  await page.locator("input.dav-pick").nth(1).uncheck();
  expect(await page.locator("#dav-next").isDisabled()).toBe(true);
  await page.locator("input.dav-pick").nth(0).check();
  await page.locator("input.dav-pick").nth(2).check();

  // Adding in flight, then done: the dialog closes, the window never waited for a sync.
  await page.evaluate(() => window.__kairos.fake.held.add("add_caldav_account"));
  await page.click("#dav-next");
  await page.waitForSelector(busy);
  expect(await page.textContent("#dav-progress")).toBe("Adding…");
  const add = await waitForCall(page, "add_caldav_account");
  expect(add.args.request).toEqual({ url: "https://dav.example.com/", user: "alice", password: "app-password", calendars: ["Work", "Chores"] });
  await page.evaluate(() => window.__kairos.fake.release());
  await page.waitForSelector("#caldav-dialog", { state: "detached" });
  const row = page.locator(".dav-account", { hasText: "alice · dav.example.com" });
  await row.waitFor();
  expect(await row.locator(".dav-when").textContent()).toBe("Syncing…");
  // A Kairos calendar for each chosen one, marked as synced with the account.
  expect(await page.locator(".cal-row:has(.cal-dav-badge) .cal-name").allTextContents()).toEqual(["Work", "Chores"]);

  // The host's background sync ends: the list is read again by itself.
  await page.evaluate(() => window.__kairos.fake.caldav.finishFirstSync(window.__kairos.fake.caldav.accounts[0]!.id));
  await page.waitForFunction(() => document.querySelector(".dav-account .dav-when")?.textContent?.startsWith("Synced "));
  expect(errors).toEqual([]);
  await page.close();
});

test("each failure in plain words with what to do, the detail, and the field to fix", async () => {
  const { page } = await open();
  await page.click("#add-calendar");
  await page.click("#add-calendar-caldav");
  await page.fill("#dav-user", "alice");
  const cases: [string, string, RegExp, string][] = [
    ["https://dav.example.com/", "wrong", /^The server refused the user name or password\. .*app password/, "dav-password"],
    ["https://dav.example.com/blog", "app-password", /^That address answered, but it is not a CalDAV server\./, "dav-url"],
    ["https://down.example/", "app-password", /^The server cannot be reached\. Check the address and your network/, "dav-url"],
    ["https://self-signed.example/", "app-password", /^The server's security certificate is not trusted/, "dav-url"],
    ["https://slow.example/", "app-password", /^The server did not answer in time\. Try again later/, "dav-url"],
  ];
  for (const [url, password, words, input] of cases) {
    await page.fill("#dav-url", url);
    await page.fill("#dav-password", password);
    await page.click("#dav-next");
    await page.waitForFunction((w) => new RegExp(w).test(document.querySelector("#dav-error:not([hidden])")?.textContent ?? ""), words.source);
    expect(await page.textContent("#dav-error-detail")).not.toBe("");
    expect(await page.getAttribute(`#${input}`, "aria-invalid")).toBe("true");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(input);
    expect(await page.getAttribute("#caldav-dialog", "data-step")).toBe("login");
  }
  // An empty field: the form's own words, nothing sent to a server.
  await page.fill("#dav-password", "");
  await page.click("#dav-next");
  await page.waitForFunction(() => document.querySelector("#dav-error")?.textContent?.toLowerCase().includes("password"));
  expect(await page.locator(".dav-account").count()).toBe(0);
  await page.click('#caldav-dialog button:has-text("Cancel")');
  await page.close();
});

test("the accounts' status; Sync now; Remove account (confirmed, events stay)", async () => {
  const { page } = await open("caldav=1");
  const good = page.locator(".dav-account", { hasText: "alice · dav.example.com" });
  const bad = page.locator(".dav-account", { hasText: "fastmail" });
  await good.waitFor();
  expect(await good.locator(".dav-when").textContent()).toMatch(/^Synced ([A-Z][a-z]{2} )?\d/);
  expect(await good.locator(".dav-error").count()).toBe(0);
  expect(await bad.locator(".dav-when").textContent()).toMatch(/^Sync failed ([A-Z][a-z]{2} )?\d/);
  expect(await bad.locator(".dav-error").textContent()).toBe("Wrong user name or password");
  expect(await bad.getAttribute("title")).toMatch(/refused the user name or password[\s\S]*401 Unauthorized[\s\S]*Nothing here was lost/);

  await bad.locator(".dav-sync").click();
  const s = await waitForCall(page, "sync_caldav_account");
  expect(typeof s.args.id).toBe("number");
  await page.waitForFunction(() => [...document.querySelectorAll(".dav-account")].every((r) => !r.querySelector(".dav-error")));

  const before = await page.locator(".cal-row").count();
  await good.locator(".dav-remove").click();
  expect(await page.textContent("#confirm-dialog")).toContain("Their events stay in Kairos as ordinary calendars");
  await page.click("#confirm-ok");
  await waitForCall(page, "remove_caldav_account");
  await good.waitFor({ state: "detached" });
  expect(await page.locator(".cal-row").count()).toBe(before);
  await page.close();
});

test("简体中文: the menu, the dialog and the status in Chinese", async () => {
  const { page } = await open("caldav=1&lang=zh-CN");
  const bad = page.locator(".dav-account", { hasText: "fastmail" });
  await bad.waitFor();
  expect(await bad.locator(".dav-error").textContent()).toBe("用户名或密码错误");
  expect(await bad.locator(".dav-sync").textContent()).toBe("立即同步");
  await page.click("#add-calendar");
  expect(await page.textContent("#add-calendar-caldav")).toBe("CalDAV 账户…");
  await page.click("#add-calendar-caldav");
  await page.fill("#dav-url", "https://down.example/");
  await page.fill("#dav-user", "alice");
  await page.fill("#dav-password", "app-password");
  await page.click("#dav-next");
  await page.waitForFunction(() => document.querySelector("#dav-error")?.textContent === "无法连接服务器。请检查地址和网络后重试。");
  await page.close();
});
