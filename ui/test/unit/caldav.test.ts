import { beforeEach, describe, expect, test } from "vitest";
import { accountName, accountStatus, caldavField, caldavProblemShort, caldavProblemText, CALDAV_KINDS, defaultChosen, dialogProblem, holds } from "../../src/lib/caldav";
import { setLang } from "../../src/i18n";
import { toApiError, type CaldavAccountView } from "../../src/ipc";

const NOW = new Date("2026-03-09T12:00:00Z");
const account = (a: Partial<CaldavAccountView>): CaldavAccountView => ({
  id: 1,
  url: "https://dav.example.com/",
  user: "alice",
  calendars: [{ name: "Work", color: "#3a86ffff", calendar_id: 3, synced_at: null }],
  synced_at: null,
  last_error: null,
  error_at: null,
  next_sync: null,
  every_seconds: 300,
  private_ca: false,
  ...a,
});

beforeEach(() => setLang("en"));

describe("accountStatus", () => {
  test("before the first sync ends: syncing", () => {
    expect(accountStatus(account({}), "UTC", "en-GB", NOW)).toEqual({ text: "Syncing…", problem: null, title: "https://dav.example.com/", syncing: true });
  });
  test("synced: when", () => {
    const s = accountStatus(account({ synced_at: "2026-03-09T11:45:00Z" }), "UTC", "en-GB", NOW);
    expect(s).toEqual({ text: "Synced 11:45", problem: null, title: "https://dav.example.com/", syncing: false });
  });
  test("failed: plain words, what to do and the detail on hover, nothing lost", () => {
    const s = accountStatus(account({ synced_at: "2026-03-09T11:00:00Z", error_at: "2026-03-09T11:50:00Z", last_error: { kind: "caldav_unauthorized", message: 'the server refused user "alice" (401)' } }), "UTC", "en-GB", NOW);
    expect(s.text).toBe("Sync failed 11:50");
    expect(s.problem).toBe("Wrong user name or password");
    expect(s.title.split("\n")).toEqual([
      "https://dav.example.com/",
      "The server refused the user name or password. Check both; if the account uses two-step sign-in, make an app password and use that.",
      'the server refused user "alice" (401)',
      "Nothing here was lost; Kairos tries again later.",
    ]);
    expect(s.syncing).toBe(false);
  });
  test("in Chinese", () => {
    setLang("zh-CN");
    const s = accountStatus(account({ error_at: "2026-03-09T11:50:00Z", last_error: { kind: "caldav_tls", message: "invalid peer certificate" } }), "UTC", "zh-CN", NOW);
    expect(s.text).toBe("同步失败 11:50");
    expect(s.problem).toBe("证书不受信任");
    expect(accountStatus(account({}), "UTC", "zh-CN", NOW).text).toBe("正在同步…");
  });
});

test("every CalDAV error kind crosses IPC as itself, has words with what to do in both languages, and points at a field", () => {
  const fields: Record<string, string | null> = {
    caldav_unauthorized: "dav-password", caldav_not_caldav: "dav-url", caldav_unreachable: "dav-url", caldav_tls: "dav-url",
    caldav_timeout: "dav-url", caldav_bad_url: "dav-url", caldav_secret: null, caldav_server: null,
  };
  for (const lang of ["en", "zh-CN"] as const) {
    setLang(lang);
    const texts = new Set<string>();
    for (const kind of CALDAV_KINDS) {
      expect(toApiError({ kind, message: "x" }).kind).toBe(kind);
      texts.add(caldavProblemText({ kind, message: "x" }));
      expect(caldavProblemShort({ kind, message: "x" })).not.toBe(caldavProblemShort({ kind: "internal", message: "x" }));
      expect(caldavField(kind)).toBe(fields[kind]);
    }
    expect(texts.size).toBe(CALDAV_KINDS.length);
    expect(texts.has(caldavProblemText({ kind: "internal", message: "x" }))).toBe(false);
  }
  setLang("en");
  for (const kind of ["caldav_unauthorized", "caldav_not_caldav", "caldav_unreachable", "caldav_tls", "caldav_timeout"] as const) {
    expect(caldavProblemText({ kind, message: "x" })).toMatch(/\. [A-Z].*\.$/);
  }
});

test("a dialog's failure: CalDAV kinds and a CA text without a certificate in plain words, other errors as usual", () => {
  const badCa = { kind: "invalid" as const, message: "ca_pem: CA certificate: no block in it" };
  for (const lang of ["en", "zh-CN"] as const) {
    setLang(lang);
    const p = dialogProblem(badCa);
    expect(p.ca).toBe(true);
    expect(p.detail).toBe("CA certificate: no block in it");
    expect(p.text).not.toContain("ca_pem");
    expect(p.text).toContain("-----BEGIN CERTIFICATE-----");
    expect(p.text).not.toBe(dialogProblem({ kind: "invalid", message: "url: empty" }).text);
    const tls = dialogProblem({ kind: "caldav_tls", message: "unknown issuer" });
    expect(tls).toEqual({ text: caldavProblemText({ kind: "caldav_tls", message: "" }), detail: "unknown issuer", ca: true });
    expect(dialogProblem({ kind: "caldav_unauthorized", message: "401" }).ca).toBe(false);
  }
  setLang("en");
  expect(dialogProblem(badCa).text).toMatch(/^Kairos cannot read a certificate/);
  expect(dialogProblem({ kind: "internal", message: "disk full" })).toEqual({ text: expect.stringContaining("disk full"), detail: "", ca: false });
});

test("the calendars ticked at first hold events; names and what a calendar holds", () => {
  const cals = [
    { name: "Work", color: null, events: true, tasks: true },
    { name: "Chores", color: null, events: false, tasks: true },
  ];
  expect(defaultChosen(cals)).toEqual(["Work"]);
  expect(defaultChosen([cals[1]!])).toEqual(["Chores"]);
  expect(cals.map(holds)).toEqual(["Events and tasks", "Tasks"]);
  expect(accountName(account({}))).toBe("alice · dav.example.com");
  expect(accountName(account({ url: "alice@fastmail.example", user: "alice@fastmail.example" }))).toBe("alice@fastmail.example · alice@fastmail.example");
});
