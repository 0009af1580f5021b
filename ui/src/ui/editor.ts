/**
 * The event editor dialog (`#editor`): the form of an `EventDraft`, saved
 * with `save_event` (asking "this / following / all" for a recurring
 * event), deleted with `delete_event`. Backend validation errors show in
 * `#ev-error`, naming the field, and mark its input.
 */
import { api, type EventDraft, type EventRef, type LostEdit, type Scope } from "../ipc";
import { addDays, addMinutes, lastDayOf, minutesBetween, parseWall, weekdayOrdinal } from "../lib/dates";
import { explain } from "../lib/errors";
import { buildRule, presetOf, PRESETS, ruleToSave, type Preset } from "../lib/recurrence";
import { locale, t, type Key } from "../i18n";
import { calendarById, defaultCalendarId, eventsChanged, loadCalendars, loadStatus, state, subscriptionOf } from "../state";
import { alarmList } from "./alarm-list";
import { dialogHeader, field, h, option, showDialog, toast } from "./dom";
import { askScope } from "./scope";
import { tzPicker } from "./tz-picker";
import { historySection } from "./history";
import { priorityKey } from "./tasks";

export interface EditorInput {
  /** The event edited; `null` for a new one. */
  ref: EventRef | null;
  draft: EventDraft;
  recurring: boolean;
  /** Edits of it that lost to another device's later edit. */
  history?: LostEdit[];
}

const dateOf = (s: string): string => s.slice(0, 10);

/** The priority choices: RFC 5545's 1 (high), 5 (medium), 9 (low), none. */
const PRIORITIES: [number, Key][] = [
  [0, "task.prio.none"],
  [1, "task.prio.high"],
  [5, "task.prio.medium"],
  [9, "task.prio.low"],
];
const weekday = (start: string): string =>
  parseWall(start)?.toLocaleDateString(locale(), { weekday: "long", timeZone: "UTC" }) ?? "";

/** The label of a repeat option for an event starting at `start`. */
export function presetLabel(p: Preset, start: string): string {
  const keys: Record<Preset, Key> = {
    none: "rep.none",
    daily: "rep.daily",
    weekdays: "rep.weekdays",
    weekly: "rep.weekly",
    monthly: "rep.monthly",
    yearly: "rep.yearly",
    custom: "rep.custom",
  };
  const n = weekdayOrdinal(start);
  const nth = t(n === -1 ? "nth.last" : (`nth.${n}` as Key));
  const date = parseWall(start)?.toLocaleDateString(locale(), { month: "long", day: "numeric", timeZone: "UTC" }) ?? "";
  return t(keys[p], { day: weekday(start), nth, date });
}

/**
 * Opens the editor for a new event starting at `start` (a date: all-day),
 * ending at `end` (exclusive, as a view selection gives it) if given.
 */
export async function newEvent(start: string, end?: string): Promise<void> {
  const cal = defaultCalendarId();
  if (cal === null) return;
  try {
    const draft = await api.new_draft(cal, start);
    if (end) draft.end = draft.all_day ? lastDayOf(start, end) : end.slice(0, 16);
    openEditor({ ref: null, draft, recurring: false });
  } catch (e) {
    toast(explain(e as never).text, "error");
  }
}

/** Opens the editor for an existing event or occurrence. */
export async function editEvent(ref: EventRef): Promise<void> {
  try {
    const d = await api.get_event(ref);
    openEditor({ ref: d.event, draft: d.draft, recurring: d.recurring, history: d.history });
  } catch (e) {
    toast(explain(e as never).text, "error");
  }
}

export function openEditor(input: EditorInput): void {
  document.getElementById("editor")?.remove();
  const d = input.draft;
  const original = { rule: d.rrule, start: d.start };
  const close = (): void => dlg.close();

  const title = h("input", { id: "ev-title", type: "text", value: d.title, placeholder: t("ed.titlePh"), class: "title-input", autocomplete: "off" });
  const calendar = h(
    "select",
    { id: "ev-calendar" },
    // A subscribed calendar's events are the feed's: none can be moved there.
    ...state.calendars.filter((c) => c.id === d.calendar_id || !subscriptionOf(c.id)).map((c) => option(String(c.id), c.name, c.id === d.calendar_id)),
  );
  const dot = h("span", { class: "cal-dot" });
  const paintDot = (): void => {
    dot.style.background = calendarById(Number(calendar.value))?.color ?? "transparent";
  };
  const allDay = h("input", { id: "ev-allday", type: "checkbox", checked: d.all_day });
  const start = h("input", { id: "ev-start", type: d.all_day ? "date" : "datetime-local", value: d.start.slice(0, d.all_day ? 10 : 16) });
  const end = h("input", { id: "ev-end", type: d.all_day ? "date" : "datetime-local", value: d.end.slice(0, d.all_day ? 10 : 16) });
  const tz = tzPicker("ev-tz", d.tz);
  const tzField = field(t("ed.tz"), tz.el, null, "tz-field");
  const location = h("input", { id: "ev-location", type: "text", value: d.location, placeholder: t("ed.locationPh") });
  const notes = h("textarea", { id: "ev-notes", rows: "3" });
  notes.value = d.notes;
  const preset0 = presetOf(d.rrule, d.start);
  const repeat = h("select", { id: "ev-repeat" });
  const rrule = h("input", { id: "ev-rrule", type: "text", value: d.rrule ?? "", placeholder: t("ed.rrulePh"), spellcheck: "false", autocomplete: "off" });
  const rruleField = field(t("ed.rrule"), rrule, null, "rrule-field");
  const alarms = alarmList(d.alarms, { id: "ev-alarms", addId: "ev-add-alarm", allowAt: true, due: d.task !== null, startOf: () => (start.value.length > 10 ? start.value : `${start.value}T09:00`) });
  const error = h("p", { id: "ev-error", role: "alert", class: "form-error", hidden: true });
  const save = h("button", { id: "ev-save", type: "submit", class: "primary" }, t("common.save"));
  const cancel = h("button", { id: "ev-cancel", type: "button", class: "ghost", onclick: close }, t("common.cancel"));
  // A task: `start` is its due time, there is no end; done and priority.
  const isTask = d.task !== null;
  const taskDone = h("input", { id: "ev-task-done", type: "checkbox", checked: d.task?.done ?? false });
  const priority = h(
    "select",
    { id: "ev-priority" },
    ...PRIORITIES.map(([v, k]) => option(String(v), t(k), k === priorityKey(d.task?.priority ?? null))),
  );
  // An unchanged choice keeps the exact value the task had (e.g. 3 shows as "high").
  const priorityValue = (): number | null => {
    const v = Number(priority.value);
    const p0 = d.task?.priority ?? null;
    if (v === 0) return null;
    return priorityKey(p0) === priorityKey(v) ? p0 : v;
  };
  const endField = field(t("ed.end"), end);
  endField.hidden = isTask;
  const del = input.ref ? h("button", { id: "ev-delete", type: "button", class: "danger ghost", onclick: () => void remove() }, t("common.delete")) : null;

  const fillRepeat = (selected: Preset): void => {
    repeat.replaceChildren(...PRESETS.map((p) => option(p, presetLabel(p, start.value || d.start), p === selected)));
  };
  fillRepeat(preset0);
  const syncRepeat = (): void => {
    rruleField.hidden = repeat.value !== "custom";
    if (repeat.value === "custom" && !rrule.value) rrule.value = buildRule("weekly", start.value) ?? "";
  };
  const syncAllDay = (): void => {
    tzField.hidden = allDay.checked;
  };

  let prevStart = start.value;
  start.addEventListener("change", () => {
    // Keep the length: moving the start moves the end.
    if (prevStart && start.value && end.value) {
      const delta = allDay.checked ? minutesBetween(prevStart, start.value) / 1440 : minutesBetween(prevStart, start.value);
      end.value = allDay.checked ? addDays(end.value, delta) : addMinutes(end.value, delta);
    }
    prevStart = start.value;
    fillRepeat(repeat.value as Preset);
  });
  allDay.addEventListener("change", () => {
    const s = start.value;
    const e = end.value;
    if (allDay.checked) {
      start.type = end.type = "date";
      start.value = dateOf(s);
      // A timed end at midnight ends the day before.
      const last = e.endsWith("T00:00") && dateOf(e) > dateOf(s) ? addDays(dateOf(e), -1) : dateOf(e);
      end.value = last < start.value ? start.value : last;
    } else {
      start.type = end.type = "datetime-local";
      start.value = `${dateOf(s)}T09:00`;
      end.value = `${dateOf(e) || dateOf(s)}T10:00`;
    }
    prevStart = start.value;
    syncAllDay();
  });
  repeat.addEventListener("change", syncRepeat);
  calendar.addEventListener("change", paintDot);

  const heading = isTask ? t(input.ref ? "ed.editTask" : "ed.newTask") : t(input.ref ? "ed.editTitle" : "ed.newTitle");
  const form = h(
    "form",
    { class: "editor-form", novalidate: true },
    dialogHeader(heading, close),
    h(
      "div",
      { class: "dialog-body" },
      title,
      h("div", { class: "row" }, field(t("ed.calendar"), h("div", { class: "with-dot" }, dot, calendar)), h("label", { class: "check" }, allDay, t("ed.allDay"))),
      h("div", { class: "row" }, field(isTask ? t("ed.due") : t("ed.start"), start), endField),
      isTask ? h("div", { class: "row" }, field(t("task.priority"), priority), h("label", { class: "check" }, taskDone, t("ed.taskDone"))) : null,
      tzField,
      h("div", { class: "row" }, field(t("ed.repeat"), repeat), rruleField),
      field(t("ed.location"), location),
      h("div", { class: "field" }, h("span", { class: "field-caption" }, t("ed.reminders")), alarms.el),
      field(t("ed.notes"), notes),
      historySection(input.history ?? []),
      error,
    ),
    h("footer", { class: "dialog-actions" }, del, h("span", { class: "spacer" }), cancel, save),
  );
  const dlg = h("dialog", { id: "editor", class: "editor", "aria-label": heading }, form);

  const draft = (): EventDraft => ({
    calendar_id: Number(calendar.value),
    title: title.value,
    all_day: allDay.checked,
    start: start.value,
    end: isTask ? start.value : end.value,
    tz: tz.input.value.trim(),
    location: location.value,
    notes: notes.value,
    rrule: ruleToSave(repeat.value as Preset, start.value, rrule.value, original),
    alarms: alarms.value(),
    task: isTask ? { done: taskDone.checked, priority: priorityValue() } : null,
  });

  const showError = (e: unknown): void => {
    const x = explain(e as never);
    error.textContent = x.text;
    error.hidden = false;
    error.scrollIntoView({ block: "nearest" });
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    const target = x.input ? form.querySelector<HTMLElement>(`#${x.input}`) : null;
    if (target) {
      target.setAttribute("aria-invalid", "true");
      target.focus();
    }
  };
  const busy = (on: boolean): void => {
    for (const b of [save, cancel, del]) if (b) b.disabled = on;
  };
  const scopeFor = async (action: "save" | "delete"): Promise<Scope | null> =>
    input.ref && input.recurring && input.ref.recurrence_id !== null ? askScope(action) : "all";

  const submit = async (): Promise<void> => {
    const dr = draft();
    const scope = await scopeFor("save");
    if (scope === null) return;
    busy(true);
    try {
      await api.save_event({ event: input.ref, scope, draft: dr });
      close();
      toast(t("ed.saved"));
      eventsChanged();
      void loadStatus().catch(() => undefined);
      void loadCalendars().catch(() => undefined);
    } catch (e) {
      showError(e);
    } finally {
      busy(false);
    }
  };
  const remove = async (): Promise<void> => {
    if (!input.ref) return;
    const scope = await scopeFor("delete");
    if (scope === null) return;
    busy(true);
    try {
      await api.delete_event({ event: input.ref, scope });
      close();
      toast(t("ed.deleted"));
      eventsChanged();
      void loadStatus().catch(() => undefined);
      void loadCalendars().catch(() => undefined);
    } catch (e) {
      showError(e);
    } finally {
      busy(false);
    }
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void submit();
  });
  // Enter in a one-line field saves; in the notes it is a new line.
  form.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void submit();
    }
  });

  paintDot();
  syncRepeat();
  syncAllDay();
  const feed = subscriptionOf(d.calendar_id);
  if (feed) readOnly(form, feed.url, [save, del]);
  showDialog(dlg);
  if (!input.ref) title.focus();
}

/**
 * An event of a subscribed calendar: shown, not editable (the next
 * refresh would replace a change; the backend refuses one too), and the
 * form says why.
 */
function readOnly(form: HTMLFormElement, url: string, hide: (HTMLElement | null)[]): void {
  form.querySelector(".dialog-body")?.prepend(h("p", { id: "ev-readonly", class: "readonly-note", role: "note" }, t("feed.readOnly", { url })));
  form.querySelectorAll<HTMLInputElement>(".dialog-body input, .dialog-body select, .dialog-body textarea, .dialog-body button").forEach((el) => {
    el.disabled = true;
  });
  for (const b of hide) if (b) b.hidden = true;
  form.dataset.readonly = "1";
}
