import { beforeEach, describe, expect, test } from "vitest";
import { setLang, TABLES } from "../../src/i18n";
import { toApiError } from "../../src/ipc";
import { SYNC_KINDS, syncErrorText } from "../../src/ui/sync-settings";

beforeEach(() => setLang("en"));

describe("sync errors", () => {
  test("every sync error kind has words in both languages, and survives the IPC", () => {
    expect(SYNC_KINDS.length).toBe(13);
    for (const kind of SYNC_KINDS) {
      const key = `sync.err.${kind}` as keyof typeof TABLES.en;
      expect(TABLES.en[key], kind).toMatch(/\.$/);
      expect(TABLES["zh-CN"][key], kind).toMatch(/。$/);
      expect(toApiError({ kind, message: "m" }).kind).toBe(kind);
    }
  });
  test("a sync kind is worded; the server's words go in only where they help", () => {
    expect(syncErrorText({ kind: "sync_code_used", message: "pairing code already used" })).toBe(
      "That pairing code was used already. Make a new one on a paired device (Settings → Sync → Add a device).",
    );
    expect(syncErrorText({ kind: "sync_server", message: "rate limited" })).toBe("The server could not do it now (rate limited). Try again in a minute.");
    setLang("zh-CN");
    expect(syncErrorText({ kind: "sync_revoked", message: "x" })).toBe("此设备已被移出同步账户。请先退出，再用新的配对码重新加入。");
  });
  test("other kinds are explained as elsewhere", () => {
    expect(syncErrorText({ kind: "invalid", message: "code: enter the pairing code" })).toBe("code: enter the pairing code");
  });
});
