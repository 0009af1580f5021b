/**
 * A subscription's words: the status line beside a subscribed calendar
 * (last refresh, last error) and an error's plain words. Pure, so the
 * unit tests cover both languages.
 */
import type { ApiError, ErrorKind, FeedProblem, SubscriptionView } from "../ipc";
import { t, type Key } from "../i18n";
import { formatClock, formatInstant } from "./dates";

/** The error kinds of feeds, each worded in `feed.err.<kind>`. */
export const FEED_KINDS: readonly ErrorKind[] = [
  "feed_url", "feed_unreachable", "feed_timeout", "feed_http", "feed_too_large", "feed_not_calendar", "feed_calendar_in_use",
];

/** Plain words for a feed problem (the detail stays in the message). */
export function feedProblemText(p: FeedProblem | ApiError): string {
  return FEED_KINDS.includes(p.kind) ? t(`feed.err.${p.kind}` as Key) : t("feed.err.other");
}

/** A few words for the calendar list (`Server error (HTTP 404)`). */
export function feedProblemShort(p: FeedProblem): string {
  if (!FEED_KINDS.includes(p.kind)) return t("feed.short.other");
  const code = /HTTP (\d{3})/.exec(p.message)?.[1];
  return t(`feed.short.${p.kind}` as Key, { status: code ? ` (HTTP ${code})` : "" });
}

export interface FeedStatus {
  /** The short line: when it was last refreshed, or that it failed. */
  text: string;
  /** The problem in a few plain words, `null` when the last refresh went well. */
  problem: string | null;
  /** On hover: the URL, the problem in full, the detail, which copy is shown. */
  title: string;
}

export function feedStatus(s: SubscriptionView, tz: string, locale: string, now: Date = new Date()): FeedStatus {
  const clock = (at: string): string => formatClock(at, tz, locale, now);
  if (!s.last_error) {
    const text = s.last_refresh ? t("feed.refreshed", { time: clock(s.last_refresh) }) : t("feed.never");
    return { text, problem: null, title: s.url };
  }
  const kept = s.last_ok ? t("feed.keptCopy", { time: formatInstant(s.last_ok, tz, locale) }) : t("feed.noCopy");
  return {
    text: s.last_refresh ? t("feed.failedAt", { time: clock(s.last_refresh) }) : t("feed.never"),
    problem: feedProblemShort(s.last_error),
    title: [s.url, feedProblemText(s.last_error), s.last_error.message, kept].join("\n"),
  };
}
