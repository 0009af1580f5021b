/**
 * The in-app reminder window (like Thunderbird's alarm dialog), as a panel
 * in the main window: every shown reminder, active and missed, with Snooze
 * (the settings' choices or custom minutes), Dismiss, and "Dismiss here only"
 * (this device only, not synced), plus Dismiss all.
 */
import { api, type ShownReminder } from "../ipc";
import { snoozeLabel } from "../lib/alarms";
import { formatInstant } from "../lib/dates";
import { explain } from "../lib/errors";
import { locale, t } from "../i18n";
import { loadShown, loadStatus, state, subscribe } from "../state";
import { h, option, toast } from "./dom";
import { icon } from "./icons";
import { editEvent } from "./editor";

const MAX_SNOOZE = 10_080;

/** What a failed action says, and the list reloaded either way. */
async function act(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    toast(explain(e as never).text, "error");
  }
  await Promise.all([loadShown(), loadStatus()]).catch(() => undefined);
}

/** Chosen snooze per reminder, kept across re-renders. */
const chosen = new Map<string, string>();

function reminderRow(r: ShownReminder): HTMLElement {
  const choices = state.settings.snooze_choices;
  const def = chosen.get(r.key) ?? String(choices.includes(state.settings.default_snooze) ? state.settings.default_snooze : (choices[0] ?? 10));
  const select = h(
    "select",
    { class: "snooze-choice", "aria-label": t("rem.snooze") },
    ...choices.map((m) => option(String(m), snoozeLabel(m), String(m) === def)),
    option("custom", t("rem.custom"), def === "custom"),
  );
  const custom = h("input", { class: "snooze-custom", type: "number", min: "1", max: String(MAX_SNOOZE), step: "1", value: "20", "aria-label": t("rem.customMinutes"), hidden: def !== "custom" });
  select.addEventListener("change", () => {
    chosen.set(r.key, select.value);
    custom.hidden = select.value !== "custom";
    if (!custom.hidden) custom.focus();
  });
  const snooze = (): void => {
    const m = select.value === "custom" ? Number(custom.value) : Number(select.value);
    if (!Number.isInteger(m) || m < 1 || m > MAX_SNOOZE) {
      custom.setCustomValidity(t("rem.badMinutes"));
      custom.reportValidity();
      toast(t("rem.badMinutes"), "error");
      return;
    }
    chosen.delete(r.key);
    void act(api.snooze({ key: r.key, minutes: m }));
  };
  custom.addEventListener("input", () => custom.setCustomValidity(""));
  const tz = state.status.time_zone;
  const bar = h("span", { class: "rem-bar" });
  bar.style.background = r.color;
  return h(
    "li",
    { class: `reminder-row${r.missed ? " missed" : ""}`, "data-key": r.key },
    bar,
    h(
      "div",
      { class: "rem-main" },
      h(
        "div",
        { class: "rem-title-line" },
        h("button", { type: "button", class: "link rem-title", onclick: () => void editEvent(r.event) }, r.title || t("app.noTitle")),
        r.missed ? h("span", { class: "badge missed-badge" }, t("rem.missed")) : null,
      ),
      h("div", { class: "rem-when" }, formatInstant(r.occurrence_start, tz, locale())),
      r.location ? h("div", { class: "rem-where muted" }, r.location) : null,
      h("div", { class: "rem-due muted" }, t("rem.due", { time: formatInstant(r.trigger, tz, locale()) })),
      h(
        "div",
        { class: "rem-actions" },
        select,
        custom,
        h("button", { type: "button", class: "snooze-btn", onclick: snooze }, t("rem.snooze")),
        h("button", { type: "button", class: "dismiss-btn primary", onclick: () => (chosen.delete(r.key), void act(api.dismiss(r.key))) }, t("rem.dismiss")),
      ),
      // Its own line under Dismiss: the panel is too narrow for four controls.
      h(
        "div",
        { class: "rem-here" },
        h("button", { type: "button", class: "dismiss-here-btn ghost", title: t("rem.dismissHereHint"), onclick: () => (chosen.delete(r.key), void act(api.dismiss_here(r.key))) }, t("rem.dismissHere")),
      ),
    ),
  );
}

export interface RemindersPanel {
  el: HTMLElement;
  button: HTMLButtonElement;
  open(): void;
  close(): void;
  toggle(): void;
  isOpen(): boolean;
}

export function remindersPanel(): RemindersPanel {
  const list = h("ul", { class: "reminder-list" });
  const empty = h("p", { class: "muted rem-empty" }, t("rem.empty"));
  const dismissAll = h("button", { type: "button", id: "dismiss-all", class: "ghost", onclick: () => void act(api.dismiss_all()) }, t("rem.dismissAll"));
  const el = h(
    "aside",
    { id: "reminders-panel", class: "panel", hidden: true, "aria-label": t("rem.title") },
    h(
      "header",
      { class: "panel-head" },
      h("h2", null, t("rem.title")),
      dismissAll,
      h("button", { type: "button", class: "icon-btn", id: "reminders-close", "aria-label": t("common.close"), onclick: () => panel.close() }, "×"),
    ),
    empty,
    list,
  );
  const count = h("span", { class: "count", hidden: true });
  const button = h(
    "button",
    { type: "button", id: "reminders-btn", class: "icon-btn", title: t("tb.reminders"), "aria-label": t("tb.reminders"), onclick: () => panel.toggle() },
    icon("bell"),
    count,
  );
  const render = (): void => {
    const rows = [...state.shown].sort((a, b) => Number(b.missed) - Number(a.missed) || a.trigger.localeCompare(b.trigger));
    list.replaceChildren(...rows.map(reminderRow));
    empty.hidden = rows.length > 0;
    dismissAll.disabled = rows.length === 0;
    count.textContent = String(rows.length);
    count.hidden = rows.length === 0;
    button.dataset.count = String(rows.length);
    button.classList.toggle("has-missed", rows.some((r) => r.missed));
    button.title = rows.length ? t("rem.count", { n: rows.length }) : t("tb.reminders");
  };
  render();
  subscribe("shown", render);
  subscribe("settings", render);

  const panel: RemindersPanel = {
    el,
    button,
    open() {
      el.hidden = false;
      button.setAttribute("aria-pressed", "true");
      void loadShown().catch(() => undefined);
    },
    close() {
      el.hidden = true;
      button.setAttribute("aria-pressed", "false");
    },
    toggle() {
      if (el.hidden) panel.open();
      else panel.close();
    },
    isOpen: () => !el.hidden,
  };
  return panel;
}
