/**
 * The sync indicator's words: what `SyncStatus` (pushed by the shell with
 * `kairos://sync-changed`) looks like in the status bar. Pure, so the unit
 * tests cover every state in both languages.
 */
import type { SyncStatus } from "../ipc";
import { t } from "../i18n";
import { formatClock, formatInstant } from "./dates";

export type SyncTone = "ok" | "busy" | "warn" | "error";

export interface SyncView {
  /** The short text in the status bar. */
  text: string;
  /** The longer text on hover (why, and when it last synced). */
  title: string;
  /** Its colour. */
  tone: SyncTone;
}

/** What the indicator shows; `null` when sync is off (not paired): hidden. */
export function syncView(s: SyncStatus, tz: string, locale: string, now: Date = new Date()): SyncView | null {
  const clock = (at: string | null): string => (at ? formatClock(at, tz, locale, now) : "");
  // The string carries its own spacing (none before Chinese full-width brackets).
  const waiting = s.waiting > 0 ? t("st.syncWaiting", { n: s.waiting }) : "";
  const last = s.last_sync_at ? t("st.syncLast", { time: formatInstant(s.last_sync_at, tz, locale) }) : t("st.syncNever");
  switch (s.state) {
    case "off":
      return null;
    case "syncing":
      return { text: t("st.syncing") + waiting, title: last, tone: "busy" };
    case "synced":
      return { text: s.last_sync_at ? t("st.syncSynced", { time: clock(s.last_sync_at) }) : t("st.syncOn"), title: last, tone: "ok" };
    case "offline":
      return {
        text: t("st.syncOffline", { time: clock(s.since) }) + waiting,
        title: [s.reason ?? "", last].filter(Boolean).join("\n"),
        tone: "warn",
      };
    case "error": {
      const reason = s.reason ?? "";
      return { text: t("st.syncError", { reason }) + waiting, title: [reason, last].filter(Boolean).join("\n"), tone: "error" };
    }
  }
}
