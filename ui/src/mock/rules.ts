// The fake backend's date arithmetic on series: which days a rule hits, and
// where a series moves when one occurrence is edited with scope "all".
import type { EventDraft } from "../ipc/bindings";
import { addDays, addMinutes, isLastWeekdayOfMonth, parseWall, toDateStr, toWallStr, weekdayCode } from "../lib/dates";
import type { StoredEvent } from "./seed";

/** Whether `day` (`YYYY-MM-DD`) is an occurrence date of `rule` for a series starting `start`. */
export function ruleMatches(rule: string, start: string, day: string): boolean {
  if (day < start.slice(0, 10)) return false;
  const p = new Map(rule.split(";").map((kv) => kv.split("=") as [string, string]));
  const byday = p.get("BYDAY");
  const wd = weekdayCode(day);
  switch (p.get("FREQ")) {
    case "DAILY":
      return true;
    case "WEEKLY":
      return (byday ?? weekdayCode(start)).split(",").includes(wd);
    case "MONTHLY": {
      if (!byday) return day.slice(8) === start.slice(8, 10);
      const m = /^(-?\d)(\w\w)$/.exec(byday);
      if (!m || m[2] !== wd) return false;
      const n = Number(m[1]);
      const date = Number(day.slice(8));
      return n === -1 ? isLastWeekdayOfMonth(day) : Math.ceil(date / 7) === n;
    }
    case "YEARLY":
      return day.slice(5) === start.slice(5, 10);
    default:
      return false;
  }
}

export const minutesOf = (d: EventDraft): number =>
  Math.round(((parseWall(d.end)?.getTime() ?? 0) - (parseWall(d.start)?.getTime() ?? 0)) / 60_000);
export const wallSecs = (s: string): string => (s.length === 10 ? s : toWallStr(parseWall(s) ?? new Date(0)));
export const occStart = (e: StoredEvent, rid: string): string => (e.draft.all_day ? rid.slice(0, 10) : rid.slice(0, 16));

/** The series' new first occurrence when an occurrence of it was edited with scope all. */
export function shiftSeries(series: EventDraft, edited: EventDraft, rid: string): EventDraft {
  const occ = series.all_day ? rid.slice(0, 10) : rid.slice(0, 16);
  const shift = Math.round(((parseWall(edited.start)?.getTime() ?? 0) - (parseWall(occ)?.getTime() ?? 0)) / 60_000);
  const mv = (s: string): string => (series.all_day ? addDays(s, Math.round(shift / 1440)) : addMinutes(s, shift));
  const len = minutesOf(edited);
  const start = mv(series.start);
  const end = series.all_day ? addDays(start, Math.round(len / 1440)) : addMinutes(start, len);
  return { ...edited, start: series.all_day ? toDateStr(parseWall(start) ?? new Date(0)) : start, end };
}
