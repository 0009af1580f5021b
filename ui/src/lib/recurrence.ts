/**
 * The editor's repeat presets and the RRULE values they stand for. The
 * presets that depend on the start (weekly on its weekday, monthly on its
 * Nth weekday) are built from the start date at save time.
 */
import { isLastWeekdayOfMonth, weekdayCode, weekdayOrdinal } from "./dates";

export const PRESETS = ["none", "daily", "weekdays", "weekly", "monthly", "yearly", "custom"] as const;
export type Preset = (typeof PRESETS)[number];

const WEEKDAYS_RULE = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR";

/** Strips `RRULE:` and blanks; `null` for nothing. */
export function cleanRule(text: string | null | undefined): string | null {
  const t = (text ?? "").trim().replace(/^RRULE:/i, "").trim();
  return t === "" ? null : t;
}

/** The monthly BYDAY value for `start`: `2TU`, or `-1FR` for a fifth weekday. */
export function monthlyByDay(start: string): string {
  return `${weekdayOrdinal(start)}${weekdayCode(start)}`;
}

/** The RRULE value of a preset for an event starting at `start`. */
export function buildRule(preset: Preset, start: string, custom = ""): string | null {
  switch (preset) {
    case "none":
      return null;
    case "daily":
      return "FREQ=DAILY";
    case "weekdays":
      return WEEKDAYS_RULE;
    case "weekly":
      return `FREQ=WEEKLY;BYDAY=${weekdayCode(start)}`;
    case "monthly":
      return `FREQ=MONTHLY;BYDAY=${monthlyByDay(start)}`;
    case "yearly":
      return "FREQ=YEARLY";
    case "custom":
      return cleanRule(custom);
  }
}

/** `KEY=VALUE;…` as a map with upper-case keys and values. */
function parts(rule: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of rule.split(";")) {
    const [k, v] = p.split("=");
    if (k && v !== undefined) out.set(k.trim().toUpperCase(), v.trim().toUpperCase());
  }
  return out;
}

/**
 * The preset a rule is, for an event starting at `start`; `custom` when it
 * says anything the presets do not (an interval, a count, another day…).
 */
export function presetOf(rule: string | null | undefined, start: string): Preset {
  const r = cleanRule(rule);
  if (r === null) return "none";
  const p = parts(r);
  const freq = p.get("FREQ");
  const byday = p.get("BYDAY");
  const keys = [...p.keys()].filter((k) => k !== "FREQ" && k !== "BYDAY" && !(k === "INTERVAL" && p.get(k) === "1"));
  if (keys.length > 0) return "custom";
  if (freq === "DAILY" && byday === undefined) return "daily";
  if (freq === "YEARLY" && byday === undefined) return "yearly";
  if (freq === "WEEKLY") {
    if (byday === undefined || byday === weekdayCode(start)) return "weekly";
    const days = byday.split(",").sort().join(",");
    if (days === ["FR", "MO", "TH", "TU", "WE"].join(",")) return "weekdays";
    return "custom";
  }
  if (freq === "MONTHLY" && byday !== undefined) {
    if (byday === monthlyByDay(start)) return "monthly";
    // A fourth weekday that is also the last one, written as -1.
    if (byday === `-1${weekdayCode(start)}` && isLastWeekdayOfMonth(start)) return "monthly";
  }
  return "custom";
}

/**
 * The rule to save: the original text when the preset and the start's date
 * did not change (so an unchanged series is not rewritten), else the preset's.
 */
export function ruleToSave(
  preset: Preset,
  start: string,
  custom: string,
  original: { rule: string | null; start: string },
): string | null {
  const unchanged =
    preset !== "custom" &&
    preset === presetOf(original.rule, original.start) &&
    start.slice(0, 10) === original.start.slice(0, 10);
  return unchanged ? cleanRule(original.rule) : buildRule(preset, start, custom);
}
