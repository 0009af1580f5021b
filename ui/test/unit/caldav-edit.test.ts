import { beforeEach, expect, test } from "vitest";
import { editChanges, intervalText, INTERVALS } from "../../src/ui/caldav-edit";
import { setLang } from "../../src/i18n";
import type { CaldavAccountView } from "../../src/ipc";

const account: CaldavAccountView = {
  id: 1,
  url: "https://dav.example.com/",
  user: "alice",
  calendars: [
    { name: "Family", color: null, calendar_id: null, synced_at: null },
    { name: "Trips", color: null, calendar_id: null, synced_at: null },
    { name: "Work", color: "#3a86ffff", calendar_id: 3, synced_at: null },
  ],
  synced_at: null,
  last_error: null,
  error_at: null,
  next_sync: null,
  every_seconds: 300,
  private_ca: false,
};

beforeEach(() => setLang("en"));

test("the dialog asks only for what changed", () => {
  expect(editChanges(account, ["Work"], 300, "")).toEqual({ every_seconds: null, choose: [], unchoose: [], password: null });
  expect(editChanges(account, ["Trips"], 900, "pw")).toEqual({ every_seconds: 900, choose: ["Trips"], unchoose: ["Work"], password: "pw" });
});

test("intervals in words, in both languages", () => {
  expect(INTERVALS.map(intervalText)).toEqual(["1 min", "5 min", "15 min", "30 min", "1 h", "6 h", "1 day"]);
  expect(intervalText(90)).toBe("90 s");
  setLang("zh-CN");
  expect(intervalText(300)).toBe("5 分钟");
  expect(intervalText(86400)).toBe("1 天");
});

test("a new CA certificate, or none, is asked for only when given", () => {
  const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  expect(editChanges(account, ["Work"], 300, "", "  \n")).toEqual({ every_seconds: null, choose: [], unchoose: [], password: null });
  expect(editChanges(account, ["Work"], 300, "", pem)).toMatchObject({ ca_pem: pem, password: null });
  // "Trust only the usual authorities" only means something when the account has a CA.
  expect(editChanges(account, ["Work"], 300, "", "", true)).not.toHaveProperty("no_ca");
  const own = { ...account, private_ca: true };
  expect(editChanges(own, ["Work"], 300, "", "", true)).toMatchObject({ no_ca: true });
  // A pasted certificate wins over the box.
  const both = editChanges(own, ["Work"], 300, "pw", pem, true);
  expect(both).toMatchObject({ ca_pem: pem, password: "pw" });
  expect(both).not.toHaveProperty("no_ca");
});
