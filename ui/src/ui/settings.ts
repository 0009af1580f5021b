/**
 * The settings dialog (`#settings`), two tabs. General: language, theme,
 * display time zone, week start, snooze choices and the notification's
 * snooze, quiet hours, start at login, default calendar. Sync: the sync
 * account (`sync-settings.ts`; it acts at once, Save is for General).
 */
import { api, type Settings } from "../ipc";
import { parseMinutesList, snoozeLabel } from "../lib/alarms";
import { explain } from "../lib/errors";
import { t } from "../i18n";
import { loadStatus, setSettings, state } from "../state";
import { dialogHeader, field, h, option, showDialog, toast } from "./dom";
import { syncPanel } from "./sync-settings";
import { tzPicker } from "./tz-picker";

export type SettingsTab = "general" | "sync";

/** Opens the settings on the General tab (a toolbar button's handler). */
export function openSettings(): void {
  openSettingsAt("general");
}

/** Opens the settings on `tab`. */
export function openSettingsAt(tab: SettingsTab): void {
  const s = state.settings;
  const close = (): void => dlg.close();
  const language = h(
    "select",
    { id: "set-language" },
    option("auto", t("set.lang.auto"), s.language === "auto"),
    option("en", "English", s.language === "en"),
    option("zh-CN", "简体中文", s.language === "zh-CN"),
  );
  const theme = h(
    "select",
    { id: "set-theme" },
    option("system", t("set.theme.system"), s.theme === "system"),
    option("light", t("set.theme.light"), s.theme === "light"),
    option("dark", t("set.theme.dark"), s.theme === "dark"),
  );
  const tz = tzPicker("set-tz", s.time_zone ?? "", t("set.tzSystem", { tz: state.status.system_time_zone }));
  const week = h(
    "select",
    { id: "set-week-start" },
    option("0", t("set.sunday"), s.week_start === 0),
    option("1", t("set.monday"), s.week_start === 1),
  );
  const snoozes = h("input", { id: "set-snooze", type: "text", value: s.snooze_choices.join(", "), autocomplete: "off" });
  const defSnooze = h("select", { id: "set-default-snooze" });
  const fillDefault = (): void => {
    const list = parseMinutesList(snoozes.value) ?? s.snooze_choices;
    const cur = Number(defSnooze.value) || s.default_snooze;
    const all = list.includes(cur) ? list : [...list, cur].sort((a, b) => a - b);
    defSnooze.replaceChildren(...all.map((m) => option(String(m), snoozeLabel(m), m === cur)));
  };
  fillDefault();
  snoozes.addEventListener("input", fillDefault);
  const quietOn = h("input", { id: "set-quiet", type: "checkbox", checked: s.quiet_hours !== null });
  const quietFrom = h("input", { id: "set-quiet-start", type: "time", value: s.quiet_hours?.start ?? "22:00" });
  const quietTo = h("input", { id: "set-quiet-end", type: "time", value: s.quiet_hours?.end ?? "07:00" });
  const syncQuiet = (): void => {
    quietFrom.disabled = quietTo.disabled = !quietOn.checked;
  };
  quietOn.addEventListener("change", syncQuiet);
  syncQuiet();
  const login = h("input", { id: "set-login", type: "checkbox", checked: s.start_at_login });
  const defCal = h(
    "select",
    { id: "set-default-calendar" },
    ...state.calendars.map((c) => option(String(c.id), c.name, c.id === s.default_calendar)),
  );
  const error = h("p", { id: "set-error", role: "alert", class: "form-error", hidden: true });
  const save = h("button", { type: "submit", id: "set-save", class: "primary" }, t("common.save"));

  const general = h(
    "div",
    { class: "dialog-body settings-grid", id: "set-general", role: "tabpanel" },
    h("div", { class: "row" }, field(t("set.language"), language), field(t("set.theme"), theme)),
    h("div", { class: "row" }, field(t("set.tz"), tz.el), field(t("set.weekStart"), week)),
    h("div", { class: "row" }, field(t("set.snoozeChoices"), snoozes, h("span", { class: "hint" }, t("set.snoozeHint"))), field(t("set.defaultSnooze"), defSnooze)),
    h(
      "div",
      { class: "field" },
      h("label", { class: "check" }, quietOn, t("set.quiet")),
      h("div", { class: "row quiet-row" }, field(t("set.quietFrom"), quietFrom), field(t("set.quietTo"), quietTo)),
      h("span", { class: "hint" }, t("set.quietHint")),
    ),
    h("div", { class: "row" }, field(t("set.defaultCalendar"), defCal), h("label", { class: "check" }, login, t("set.startAtLogin"))),
    error,
  );
  const syncBody = h("div", { class: "dialog-body", id: "set-sync", role: "tabpanel", hidden: true });
  const cancel = h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel"));
  const tabGeneral = h("button", { type: "button", id: "set-tab-general", role: "tab", class: "tab" }, t("set.tab.general"));
  const tabSync = h("button", { type: "button", id: "set-tab-sync", role: "tab", class: "tab" }, t("set.tab.sync"));
  const select = (which: SettingsTab): void => {
    const isSync = which === "sync";
    tabGeneral.setAttribute("aria-selected", String(!isSync));
    tabSync.setAttribute("aria-selected", String(isSync));
    general.hidden = isSync;
    syncBody.hidden = !isSync;
    save.hidden = isSync;
    cancel.textContent = isSync ? t("common.close") : t("common.cancel");
    // The sync panel loads (from the database) when first shown.
    if (isSync && !syncBody.firstChild) syncBody.append(syncPanel());
  };
  tabGeneral.addEventListener("click", () => select("general"));
  tabSync.addEventListener("click", () => select("sync"));
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(t("set.title"), close),
    h("div", { class: "tabs", role: "tablist" }, tabGeneral, tabSync),
    general,
    syncBody,
    h("footer", { class: "dialog-actions" }, h("span", { class: "spacer" }), cancel, save),
  );
  select(tab);
  const dlg = h("dialog", { id: "settings" }, form);

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    // Enter in a sync field is not a Save of the General tab.
    if (!syncBody.hidden) return;
    const choices = parseMinutesList(snoozes.value);
    if (!choices) {
      error.textContent = t("set.snoozeInvalid");
      error.hidden = false;
      snoozes.focus();
      return;
    }
    const next: Settings = {
      ...s,
      language: language.value,
      theme: theme.value,
      time_zone: tz.input.value.trim() || null,
      week_start: Number(week.value),
      snooze_choices: choices,
      default_snooze: Number(defSnooze.value),
      quiet_hours: quietOn.checked ? { start: quietFrom.value, end: quietTo.value } : null,
      start_at_login: login.checked,
      default_calendar: defCal.value === "" ? null : Number(defCal.value),
    };
    save.disabled = true;
    api
      .save_settings(next)
      .then(async (saved) => {
        close();
        await loadStatus().catch(() => undefined);
        setSettings(saved);
        toast(t("set.saved"));
      })
      .catch((err: unknown) => {
        error.textContent = explain(err as never).text;
        error.hidden = false;
      })
      .finally(() => (save.disabled = false));
  });
  showDialog(dlg);
}
