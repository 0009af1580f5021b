/**
 * The reminders list of the event editor and of a calendar's defaults:
 * rows of "[15] min [before] [start]" or "[at a time] [2026-12-03 09:00]",
 * each rung once or "[again every 5 minutes] [6]" times until dismissed;
 * an "Add reminder" button and a quick-add menu of presets.
 */
import type { AlarmSpec } from "../ipc";
import { AGAIN_MINUTES, againLabel, alarmLabel, PRESET_MINUTES, rowOf, snoozeLabel, specOf, type AlarmRow } from "../lib/alarms";
import { locale, t } from "../i18n";
import { h, option } from "./dom";

export interface AlarmList {
  el: HTMLElement;
  /** The rows as the contract's specs. */
  value(): AlarmSpec[];
}

export interface AlarmListOptions {
  /** id of the list (errors point at it). */
  id: string;
  /** id of the "add" button. */
  addId: string;
  /** Offer "at a time" (not for calendar defaults, which have no date). */
  allowAt: boolean;
  /** The start of the event, `YYYY-MM-DDTHH:MM`, for a new "at" row. */
  startOf: () => string;
  /** A task's: reminders count from its due time (no start/end choice). */
  due?: boolean;
}

function rowEl(row: AlarmRow, opts: AlarmListOptions, changed: () => void): HTMLElement {
  const kind = h(
    "select",
    { class: "alarm-kind", "aria-label": t("ed.reminders") },
    option("before", t("alarm.before"), row.kind === "before"),
    option("after", t("alarm.after"), row.kind === "after"),
    opts.allowAt || row.kind === "at" ? option("at", t("alarm.at"), row.kind === "at") : null,
  );
  const minutes = h("input", { class: "alarm-minutes", type: "number", min: "0", step: "1", value: String(row.minutes), "aria-label": t("alarm.min") });
  const unit = h("span", { class: "alarm-unit" }, t("alarm.min"));
  const related = h(
    "select",
    { class: "alarm-related", "aria-label": t("alarm.start") },
    option("start", t("alarm.start"), row.related === "start"),
    option("end", t("alarm.end"), row.related === "end"),
  );
  const at = h("input", { class: "alarm-at", type: "datetime-local", value: row.at, "aria-label": t("alarm.at") });
  // Again until dismissed: every N minutes, at most M times.
  const everies = [...new Set([...AGAIN_MINUTES, ...(row.again ? [row.again.every_minutes] : [])])].sort((a, b) => a - b);
  const again = h(
    "select",
    { class: "alarm-again", "aria-label": t("alarm.again") },
    option("", t("alarm.once"), row.again === null),
    ...everies.map((m) => option(String(m), t("alarm.againEvery", { d: snoozeLabel(m) }), row.again?.every_minutes === m)),
  );
  const againMax = h("input", { class: "alarm-again-max", type: "number", min: "1", max: "100", step: "1", value: String(row.again?.max ?? 6), "aria-label": t("alarm.againMax"), title: t("alarm.againMax") });
  const label = h("span", { class: "alarm-label muted" });
  const el = h(
    "div",
    { class: "alarm-row" },
    minutes,
    unit,
    kind,
    related,
    at,
    again,
    againMax,
    h("button", { type: "button", class: "alarm-remove icon-btn", title: t("alarm.remove"), "aria-label": t("alarm.remove"), onclick: () => (el.remove(), changed()) }, "×"),
    label,
  );
  const sync = (): void => {
    const isAt = kind.value === "at";
    for (const x of [minutes, unit, related]) x.hidden = isAt;
    if (opts.due) related.hidden = true;
    at.hidden = !isAt;
    if (isAt && !at.value) at.value = opts.startOf();
    againMax.hidden = again.value === "";
    const r = readRow(el);
    label.textContent = alarmLabel(specOf(r), locale(), opts.due) + againLabel(r.again);
  };
  for (const x of [kind, minutes, related, at, again, againMax]) x.addEventListener("input", sync);
  for (const x of [kind, minutes, related, at, again, againMax]) x.addEventListener("change", sync);
  sync();
  return el;
}

function readRow(el: HTMLElement): AlarmRow {
  const q = <T extends HTMLElement>(sel: string): T => el.querySelector(sel) as T;
  const minutes = Number(q<HTMLInputElement>(".alarm-minutes").value);
  return {
    kind: q<HTMLSelectElement>(".alarm-kind").value as AlarmRow["kind"],
    minutes: Number.isFinite(minutes) ? minutes : 0,
    related: q<HTMLSelectElement>(".alarm-related").value === "end" ? "end" : "start",
    at: q<HTMLInputElement>(".alarm-at").value,
    again: againOf(q<HTMLSelectElement>(".alarm-again").value, q<HTMLInputElement>(".alarm-again-max").value),
  };
}

function againOf(every: string, max: string): AlarmRow["again"] {
  if (every === "") return null;
  const n = Math.round(Number(max));
  return { every_minutes: Number(every), max: Number.isFinite(n) ? n : 0 };
}

export function alarmList(initial: AlarmSpec[], opts: AlarmListOptions): AlarmList {
  const rows = h("div", { class: "alarm-rows", id: opts.id });
  const empty = h("p", { class: "muted alarm-empty" }, t("ed.noAlarms"));
  const changed = (): void => {
    empty.hidden = rows.children.length > 0;
  };
  const add = (spec: AlarmSpec): void => {
    rows.append(rowEl(rowOf(spec, opts.startOf()), opts, changed));
    changed();
  };
  for (const s of initial) add(s);

  const quick = h(
    "select",
    { class: "alarm-quick", "aria-label": t("ed.quickAdd") },
    option("", t("ed.quickAdd"), true),
    ...PRESET_MINUTES.map((m) => option(String(m), alarmLabel({ kind: "before", minutes: m, related: "start" }, locale()))),
    opts.allowAt ? option("at", t("alarm.at")) : null,
  );
  quick.addEventListener("change", () => {
    const v = quick.value;
    if (v === "at") add({ kind: "at", at: opts.startOf() });
    else if (v !== "") add({ kind: "before", minutes: Number(v), related: "start" });
    quick.value = "";
  });
  const addBtn = h(
    "button",
    { type: "button", id: opts.addId, class: "ghost small", onclick: () => add({ kind: "before", minutes: 15, related: "start" }) },
    `+ ${t("ed.addAlarm")}`,
  );
  changed();
  return {
    el: h("div", { class: "alarm-list" }, empty, rows, h("div", { class: "alarm-add" }, addBtn, quick)),
    value: () => [...rows.querySelectorAll<HTMLElement>(".alarm-row")].map((r) => specOf(readRow(r))),
  };
}
