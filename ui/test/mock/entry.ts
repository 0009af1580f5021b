/**
 * The browser tests' page (mock.html): installs the in-memory backend with
 * `mockIPC`, then starts the real UI. `?lang=zh-CN`, `?theme=dark` seed the
 * fake's settings (`?sync=off`: not paired; `?feeds=1`: subscriptions; `?caldav=1`: CalDAV accounts); `window.__kairos` lets a test read calls, make the next
 * call of a command fail, and emit shell events.
 */
import { emit } from "@tauri-apps/api/event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { Settings } from "../../src/ipc/bindings";
import { FakeBackend } from "../../src/mock/fake";

const params = new URLSearchParams(location.search);
const settings: Partial<Settings> = {};
const langParam = params.get("lang");
if (langParam) settings.language = langParam;
const theme = params.get("theme");
if (theme) settings.theme = theme;

const fake = new FakeBackend(settings);
// `?sync=off`: a database that never joined a sync account.
if (params.get("sync") === "off") {
  fake.accounts.unpair();
  fake.sync = { state: "off", last_sync_at: null, since: null, reason: null, waiting: 0 };
}
// `?feeds=1`: two subscribed calendars, one whose last refresh failed.
if (params.get("feeds") === "1") {
  let id = 50;
  const next = (): number => id++;
  const ago = (min: number): string => new Date(Date.now() - min * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  fake.feeds.subscribe({ url: "webcal://calendar.example.org/rota.ics", calendar: "Team rota", every_minutes: 60 }, fake, next);
  fake.feeds.subscribe({ url: "https://school.example.org/term.ics", calendar: "School", every_minutes: 360 }, fake, next);
  const school = fake.feeds.subs[1];
  if (school) {
    school.url = "https://school.example.org/html/term.ics";
    fake.feeds.refresh(school.calendar_id);
    school.last_ok = ago(200);
  }
  const rota = fake.feeds.subs[0];
  if (rota) rota.last_refresh = rota.last_ok = ago(12);
}
// `?caldav=1`: two CalDAV accounts, one synced a few minutes ago, one
// whose last sync was refused (the password changed on the server).
if (params.get("caldav") === "1") {
  let id = 70;
  const next = (): number => id++;
  const ok = fake.caldav.add({ url: "https://dav.example.com/", user: "alice", password: "app-password", calendars: ["Work", "Family"] }, fake.calendars, next);
  fake.caldav.finishFirstSync(ok.id, null, new Date(Date.now() - 3 * 60_000));
  const bad = fake.caldav.add({ url: "alice@fastmail.example", user: "alice@fastmail.example", password: "app-password", calendars: ["Chores"] }, fake.calendars, next);
  fake.caldav.finishFirstSync(bad.id, { kind: "caldav_unauthorized", message: 'the server at https://fastmail.example/ refused user "alice@fastmail.example" (401 Unauthorized): check the user name and the password (an app password if the account uses two-step sign-in)' });
}
mockIPC((cmd, args) => fake.handle(cmd, (args ?? {}) as Record<string, unknown>), { shouldMockEvents: true });

declare global {
  interface Window {
    __kairos: { fake: FakeBackend; emit: typeof emit };
  }
}
window.__kairos = { fake, emit };
// `?pending=reminders`: like a shell that made this window to show the
// reminder panel, and sends the event once the UI says it listens.
if (params.get("pending") === "reminders") {
  fake.onReady = () => {
    void emit("kairos://show-reminders");
    return null;
  };
}

await import("../../src/main");
