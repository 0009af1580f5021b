/**
 * The reminders list of the event editor and of a calendar's defaults:
 * rows of "[15] min [before] [start]" or "[at a time] [2026-12-03 09:00]",
 * an "Add reminder" button and a quick-add menu of presets.
 */
import type { AlarmSpec } from "../ipc";
import { alarmLabel, PRESET_MINUTES, rowOf, specOf, type AlarmRow } from "../lib/alarms";
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
  const label = h("span", { class: "alarm-label muted" });
  const el = h(
    "div",
    { class: "alarm-row" },
    minutes,
    unit,
    kind,
    related,
    at,
    label,
    h("button", { type: "button", class: "alarm-remove icon-btn", title: t("alarm.remove"), "aria-label": t("alarm.remove"), onclick: () => (el.remove(), changed()) }, "×"),
  );
  const sync = (): void => {
    const isAt = kind.value === "at";
    for (const x of [minutes, unit, related]) x.hidden = isAt;
    if (opts.due) related.hidden = true;
    at.hidden = !isAt;
    if (isAt && !at.value) at.value = opts.startOf();
    label.textContent = alarmLabel(specOf(readRow(el)), locale(), opts.due);
  };
  for (const x of [kind, minutes, related, at]) x.addEventListener("input", sync);
  for (const x of [kind, minutes, related, at]) x.addEventListener("change", sync);
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
  };
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
