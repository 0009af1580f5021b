/**
 * A CalDAV account's words: a failure in plain words with what to do
 * (long, for the dialog and the hover; short, for the sidebar), which
 * field of the dialog it points at, and the account's status line
 * (syncing, last sync, last error). Pure, so the unit tests cover both
 * languages.
 */
import type { ApiError, CaldavAccountView, CaldavProblem, ErrorKind, RemoteCalendarView } from "../ipc";
import { t, type Key } from "../i18n";
import { formatClock } from "./dates";
import { explain } from "./errors";

/** The error kinds of CalDAV, each worded in `dav.err.<kind>` and `dav.short.<kind>`. */
export const CALDAV_KINDS: readonly ErrorKind[] = [
  "caldav_unauthorized", "caldav_not_caldav", "caldav_unreachable", "caldav_tls", "caldav_timeout", "caldav_bad_url", "caldav_secret", "caldav_server",
];

const known = (k: ErrorKind): boolean => CALDAV_KINDS.includes(k);

/** Plain words for a CalDAV failure, with what to do (the detail stays in the message). */
export function caldavProblemText(p: CaldavProblem | ApiError): string {
  return known(p.kind) ? t(`dav.err.${p.kind}` as Key) : t("dav.err.other");
}

/** What a CalDAV dialog shows when a step fails. */
export interface DialogProblem {
  /** Plain words in the UI's language, with what to do. */
  text: string;
  /** The server's or the checker's own words, shown small below ("" for none). */
  detail: string;
  /** Whether it is about the certificate authority (open that section, mark it). */
  ca: boolean;
}

/** Prefix of the backend's message for a CA text it cannot read. */
const CA_FIELD = "ca_pem: ";

/** A dialog step's failure in plain words: a CalDAV failure, a CA text
 * that holds no certificate, or any other backend error. */
export function dialogProblem(e: ApiError): DialogProblem {
  if (known(e.kind)) return { text: caldavProblemText(e), detail: e.message, ca: e.kind === "caldav_tls" };
  if (e.kind === "invalid" && e.message.startsWith(CA_FIELD)) {
    return { text: t("dav.err.badCa"), detail: e.message.slice(CA_FIELD.length), ca: true };
  }
  return { text: explain(e).text, detail: "", ca: false };
}

/** A few words for the sidebar. */
export function caldavProblemShort(p: CaldavProblem): string {
  return known(p.kind) ? t(`dav.short.${p.kind}` as Key) : t("dav.short.other");
}

/** The dialog's field a failure points at (focused, marked invalid). */
export function caldavField(kind: ErrorKind): "dav-url" | "dav-user" | "dav-password" | null {
  switch (kind) {
    case "caldav_unauthorized": return "dav-password";
    case "caldav_not_caldav":
    case "caldav_unreachable":
    case "caldav_tls":
    case "caldav_timeout":
    case "caldav_bad_url": return "dav-url";
    default: return null;
  }
}

/** The calendars ticked at first: those that hold events (else all). */
export function defaultChosen(cals: RemoteCalendarView[]): string[] {
  const withEvents = cals.filter((c) => c.events).map((c) => c.name);
  return withEvents.length ? withEvents : cals.map((c) => c.name);
}

/** What a calendar holds, in words ("Events and tasks"). */
export function holds(c: RemoteCalendarView): string {
  if (c.events && c.tasks) return t("dav.holds.both");
  return c.tasks ? t("dav.holds.tasks") : t("dav.holds.events");
}

/** `user@host` for an account's heading. */
export function accountName(a: CaldavAccountView): string {
  const host = /^[a-z]+:\/\/([^/]+)/i.exec(a.url.trim())?.[1] ?? a.url.trim();
  return `${a.user} · ${host}`;
}

export interface AccountStatus {
  /** The short line: syncing, when it last synced, or that it failed. */
  text: string;
  /** The problem in a few words, `null` when the last sync went well. */
  problem: string | null;
  /** On hover: the URL, the problem with what to do, the detail. */
  title: string;
  /** No sync has ended yet (the first runs in the background). */
  syncing: boolean;
}

export function accountStatus(a: CaldavAccountView, tz: string, locale: string, now: Date = new Date()): AccountStatus {
  const clock = (at: string): string => formatClock(at, tz, locale, now);
  if (a.last_error) {
    return {
      text: t("dav.failedAt", { time: clock(a.error_at ?? a.last_error.message) }),
      problem: caldavProblemShort(a.last_error),
      title: [a.url, caldavProblemText(a.last_error), a.last_error.message, t("dav.keptLocal")].join("\n"),
      syncing: false,
    };
  }
  if (!a.synced_at) return { text: t("dav.syncing"), problem: null, title: a.url, syncing: true };
  return { text: t("dav.synced", { time: clock(a.synced_at) }), problem: null, title: a.url, syncing: false };
}
