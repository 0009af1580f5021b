/**
 * Reminders as the editor shows them: rows of (kind, minutes, related, at)
 * to and from the contract's `AlarmSpec`, presets, and readable labels.
 */
import type { Again, AlarmSpec, Related } from "../ipc/bindings";
import { formatWall } from "./dates";
import { t, type Key } from "../i18n";

export type AlarmKind = "before" | "after" | "at";

/** One row of the reminders list. */
export interface AlarmRow {
  kind: AlarmKind;
  /** Minutes, ≥ 0 (direction comes from `kind`). */
  minutes: number;
  related: Related;
  /** `YYYY-MM-DDTHH:MM`, used when `kind` is `at`. */
  at: string;
  /** Ring again until dismissed (`X-KAIROS-ESCALATE`), or once. */
  again: Again | null;
}

/** Minutes between rings offered for "again until dismissed". */
export const AGAIN_MINUTES = [5, 10, 15, 30, 60] as const;

/** Minutes before the start offered as one-click reminders. */
export const PRESET_MINUTES = [0, 5, 10, 15, 30, 60, 1440] as const;

export function rowOf(spec: AlarmSpec, fallbackAt: string): AlarmRow {
  const again = spec.again ?? null;
  if (spec.kind === "at") return { kind: "at", minutes: 15, related: "start", at: spec.at.slice(0, 16), again };
  return {
    kind: spec.minutes < 0 ? "after" : "before",
    minutes: Math.abs(spec.minutes),
    related: spec.related,
    at: fallbackAt.slice(0, 16),
    again,
  };
}

export function specOf(row: AlarmRow): AlarmSpec {
  // Only an escalating row carries `again` (the contract leaves it out otherwise).
  const again = row.again ? { again: row.again } : {};
  if (row.kind === "at") return { kind: "at", at: row.at, ...again };
  const m = Math.max(0, Math.round(row.minutes));
  return { kind: "before", minutes: row.kind === "after" ? -m : m, related: row.related, ...again };
}

/** ", then every 5 minutes until dismissed (at most 6 times)", or "". */
export function againLabel(again: Again | null | undefined): string {
  if (!again) return "";
  return t("alarm.againLabel", { d: durationLabel(again.every_minutes), n: again.max });
}

/** "90 minutes", "1 hour", "2 days": the largest whole unit. */
export function durationLabel(minutes: number): string {
  const m = Math.abs(minutes);
  const unit = (n: number, one: Key, many: Key): string => t(n === 1 ? one : many, { n });
  if (m !== 0 && m % 10080 === 0) return unit(m / 10080, "dur.week", "dur.weeks");
  if (m !== 0 && m % 1440 === 0) return unit(m / 1440, "dur.day", "dur.days");
  if (m !== 0 && m % 60 === 0) return unit(m / 60, "dur.hour", "dur.hours");
  return unit(m, "dur.minute", "dur.minutes");
}

/** A reminder for people: "15 minutes before start", "At start", "At Dec 3, 9:00 AM". */
export function alarmLabel(spec: AlarmSpec, locale: string, due = false): string {
  if (spec.kind === "at") return t("alarm.label.at", { time: formatWall(spec.at, locale) });
  // A task's reminders count from its due time, whichever end is named.
  if (due) {
    if (spec.minutes === 0) return t("alarm.label.atDue");
    return t(spec.minutes > 0 ? "alarm.label.beforeDue" : "alarm.label.afterDue", { d: durationLabel(spec.minutes) });
  }
  if (spec.minutes === 0) return t(spec.related === "start" ? "alarm.label.atStart" : "alarm.label.atEnd");
  const key: Key =
    spec.minutes > 0
      ? spec.related === "start"
        ? "alarm.label.beforeStart"
        : "alarm.label.beforeEnd"
      : spec.related === "start"
        ? "alarm.label.afterStart"
        : "alarm.label.afterEnd";
  return t(key, { d: durationLabel(spec.minutes) });
}

/** A short snooze label: "5 min", "1 h", "1 day". */
export function snoozeLabel(minutes: number): string {
  if (minutes % 1440 === 0) return t("snooze.days", { n: minutes / 1440 });
  if (minutes % 60 === 0) return t("snooze.hours", { n: minutes / 60 });
  return t("snooze.minutes", { n: minutes });
}

/** Parses "5, 10, 1h, 1d" into sorted unique minutes; `null` if any part is bad. */
export function parseMinutesList(text: string): number[] | null {
  const out = new Set<number>();
  for (const raw of text.split(/[,\s，]+/).filter(Boolean)) {
    const m = /^(\d+)\s*(m|min|h|d)?$/i.exec(raw);
    if (!m) return null;
    const n = Number(m[1]);
    const mult = { h: 60, d: 1440 }[(m[2] ?? "m").toLowerCase() as "h" | "d"] ?? 1;
    if (n * mult < 1) return null;
    out.add(n * mult);
  }
  return out.size ? [...out].sort((a, b) => a - b) : null;
}
