/**
 * Backend errors for people. Validation messages start with the field they
 * are about (`end: before the start`); we name that field in the UI's
 * language and say which input to mark.
 */
import type { ApiError } from "../ipc/bindings";
import { t, type Key } from "../i18n";

/** Backend field prefixes → (label key, editor input id). */
const FIELDS: Record<string, { label: Key; input: string }> = {
  title: { label: "field.title", input: "ev-title" },
  start: { label: "field.start", input: "ev-start" },
  end: { label: "field.end", input: "ev-end" },
  "time zone": { label: "field.tz", input: "ev-tz" },
  location: { label: "field.location", input: "ev-location" },
  notes: { label: "field.notes", input: "ev-notes" },
  recurrence: { label: "field.repeat", input: "ev-rrule" },
  event: { label: "field.repeat", input: "ev-rrule" },
  reminder: { label: "field.reminders", input: "ev-alarms" },
  reminders: { label: "field.reminders", input: "ev-alarms" },
  "reminder time": { label: "field.reminders", input: "ev-alarms" },
  "default reminders": { label: "field.reminders", input: "cal-alarms" },
  name: { label: "field.name", input: "cal-name" },
  colour: { label: "field.color", input: "cal-color" },
  "working week": { label: "cal.workWeek", input: "cal-work-week" },
  calendar: { label: "field.calendar", input: "ev-calendar" },
};

export interface Explained {
  /** The whole message, field named in the UI's language. */
  text: string;
  /** The input the message is about, if known. */
  input: string | null;
}

export function explain(e: ApiError): Explained {
  if (e.kind === "invalid") {
    const m = /^([a-z][a-z ]*?): (.*)$/s.exec(e.message);
    const f = m && FIELDS[m[1] ?? ""];
    if (m && f) return { text: `${t(f.label)}: ${m[2] ?? ""}`, input: f.input };
    return { text: e.message, input: null };
  }
  if (e.kind === "not_found") return { text: t("err.notFound", { message: e.message }), input: null };
  return { text: t("err.generic", { message: e.message }), input: null };
}
