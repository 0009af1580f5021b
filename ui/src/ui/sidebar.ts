/**
 * The calendars sidebar: colour, visibility, event count, an edit dialog
 * (name, colour, default reminders, delete), an "add calendar" menu (new,
 * from a URL: `./feeds`, or a CalDAV account: `./caldav`), a subscribed
 * calendar's feed status, the CalDAV accounts with their sync status, and
 * the ICS import/export buttons; below them the tasks (`./tasks`).
 */
import { api, type CalendarInfo } from "../ipc";
import { explain } from "../lib/errors";
import { locale, t } from "../i18n";
import { eventsChanged, loadCalendars, loadStatus, state, subscribe, subscriptionOf } from "../state";
import { alarmList } from "./alarm-list";
import { dialogHeader, field, h, showDialog, toast } from "./dom";
import { accountOf, accountsPanel, openCaldav } from "./caldav";
import { feedRow, openSubscribe } from "./feeds";
import { exportIcs, importIcs } from "./ics";
import { confirmDialog } from "./scope";
import { tasksPanel } from "./tasks";

const PALETTE = ["#3a86ff", "#2a9d8f", "#e76f51", "#8338ec", "#f4a261", "#e63946", "#06d6a0", "#6c757d"];

function row(c: CalendarInfo): HTMLElement {
  const box = h("input", {
    type: "checkbox",
    class: "cal-visible",
    checked: c.visible,
    "aria-label": t("cal.toggle", { name: c.name }),
  });
  box.style.setProperty("--cal-color", c.color);
  box.addEventListener("change", () => {
    void api
      .save_calendar({ id: c.id, name: c.name, color: c.color, visible: box.checked, default_alarms: c.default_alarms, work_week: c.work_week, holidays: c.holidays })
      .then(() => loadCalendars())
      .then(() => eventsChanged())
      .catch((e: unknown) => {
        box.checked = !box.checked;
        toast(explain(e as never).text, "error");
      });
  });
  const feed = subscriptionOf(c.id);
  const dav = accountOf(c.id);
  const davTitle = dav ? t("dav.badge", { name: `${dav.user} · ${dav.url}` }) : "";
  return h(
    "li",
    { class: `cal-row${feed ? " is-feed" : ""}`, "data-calendar-id": String(c.id) },
    h("label", { class: "cal-label" }, box, h("span", { class: "cal-name" }, c.name)),
    dav ? h("span", { class: "cal-feed-badge cal-dav-badge", title: davTitle, "aria-label": davTitle }, "⇅") : null,
    feed ? h("span", { class: "cal-feed-badge", title: t("feed.badge", { url: feed.url }), "aria-label": t("feed.badge", { url: feed.url }) }, "⇣") : null,
    h("span", { class: "cal-count muted", title: t("cal.events", { n: c.events }) }, String(c.events)),
    h("button", { type: "button", class: "icon-btn cal-edit", title: t("cal.edit", { name: c.name }), "aria-label": t("cal.edit", { name: c.name }), onclick: () => editCalendar(c) }, "⋯"),
    feed ? feedRow(feed) : null,
  );
}

/** The "+" menu: a new calendar, or one subscribed from a URL. */
function addMenu(): HTMLElement {
  const menu = h(
    "div",
    { id: "add-calendar-menu", class: "menu", role: "menu", hidden: true },
    h("button", { type: "button", id: "add-calendar-new", role: "menuitem", onclick: () => pick(() => editCalendar(null)) }, t("cal.addNew")),
    h("button", { type: "button", id: "add-calendar-url", role: "menuitem", onclick: () => pick(openSubscribe) }, t("cal.addUrl")),
    h("button", { type: "button", id: "add-calendar-caldav", role: "menuitem", onclick: () => pick(openCaldav) }, t("cal.addCaldav")),
  );
  const button = h("button", { type: "button", id: "add-calendar", class: "icon-btn", title: t("cal.add"), "aria-label": t("cal.add"), "aria-haspopup": "menu", onclick: () => toggle() }, "+");
  const away = (e: Event): void => {
    if (!wrap.contains(e.target as Node)) toggle(false);
  };
  const toggle = (open = menu.hidden): void => {
    menu.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (open) document.addEventListener("pointerdown", away);
    else document.removeEventListener("pointerdown", away);
  };
  const pick = (f: () => void): void => {
    toggle(false);
    f();
  };
  const wrap = h("div", { class: "menu-wrap" }, button, menu);
  return wrap;
}

export function sidebar(): HTMLElement {
  const list = h("ul", { class: "cal-list", id: "calendars" });
  const render = (): void => list.replaceChildren(...state.calendars.map(row));
  render();
  subscribe("calendars", render);
  return h(
    "aside",
    { id: "sidebar", class: "sidebar" },
    h(
      "div",
      { class: "sidebar-head" },
      h("h2", null, t("cal.heading")),
      addMenu(),
    ),
    list,
    accountsPanel(),
    tasksPanel(),
    h(
      "div",
      { class: "sidebar-foot" },
      h("button", { type: "button", id: "import-ics", class: "ghost", onclick: () => void importIcs() }, t("cal.import")),
      h("button", { type: "button", id: "export-ics", class: "ghost", onclick: () => exportIcs() }, t("cal.export")),
    ),
  );
}

/** Monday to Friday as the backend's weekday bits (Monday = bit 0). */
const MON_FRI = 0b001_1111;

/** Seven weekday toggles (Monday first) for a working week bitset. */
function workWeek(bits: number): { el: HTMLElement; value(): number } {
  const boxes = [0, 1, 2, 3, 4, 5, 6].map((i) => {
    // 2024-01-01 was a Monday.
    const day = new Date(Date.UTC(2024, 0, 1 + i)).toLocaleDateString(locale(), { weekday: "short", timeZone: "UTC" });
    const box = h("input", { type: "checkbox", class: "work-day", "data-day": String(i), checked: (bits & (1 << i)) !== 0 });
    return { box, el: h("label", { class: "work-day-label" }, box, day) };
  });
  return {
    el: h("div", { class: "work-week", id: "cal-work-week" }, ...boxes.map((b) => b.el)),
    value: () => boxes.reduce((acc, b, i) => acc | (b.box.checked ? 1 << i : 0), 0),
  };
}

/** The calendar dialog (`#calendar-dialog`); `null` creates one. */
export function editCalendar(c: CalendarInfo | null): void {
  const close = (): void => dlg.close();
  const name = h("input", { id: "cal-name", type: "text", value: c?.name ?? "", autocomplete: "off" });
  const used = new Set(state.calendars.map((x) => x.color));
  const color = h("input", { id: "cal-color", type: "color", value: c?.color ?? PALETTE.find((p) => !used.has(p)) ?? PALETTE[0] });
  const swatches = h(
    "div",
    { class: "swatches" },
    ...PALETTE.map((p) => {
      const b = h("button", { type: "button", class: "swatch", title: p, "aria-label": p, onclick: () => ((color.value = p), mark()) });
      b.style.background = p;
      return b;
    }),
  );
  const mark = (): void =>
    swatches.querySelectorAll<HTMLElement>(".swatch").forEach((b) => b.setAttribute("aria-pressed", String(b.title === color.value.toLowerCase())));
  color.addEventListener("input", mark);
  mark();
  const alarms = alarmList(c?.default_alarms ?? [], { id: "cal-alarms", addId: "cal-add-alarm", allowAt: false, startOf: () => "" });
  const week = workWeek(c?.work_week ?? MON_FRI);
  const holidays = h("input", { id: "cal-holidays", type: "checkbox", checked: c?.holidays ?? false });
  const error = h("p", { id: "cal-error", role: "alert", class: "form-error", hidden: true });
  const save = h("button", { type: "submit", id: "cal-save", class: "primary" }, t("common.save"));
  const del =
    c && state.calendars.length > 1
      ? h("button", { type: "button", id: "cal-delete", class: "danger ghost", onclick: () => void remove() }, t("cal.delete"))
      : null;
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(c ? t("cal.editTitle") : t("cal.newTitle"), close),
    h(
      "div",
      { class: "dialog-body" },
      field(t("cal.name"), name),
      h("div", { class: "field" }, h("span", { class: "field-caption" }, t("cal.color")), h("div", { class: "color-row" }, color, swatches)),
      h("div", { class: "field" }, h("span", { class: "field-caption" }, t("cal.defaults")), h("p", { class: "hint" }, t("cal.defaultsHint")), alarms.el),
      h("div", { class: "field" }, h("span", { class: "field-caption" }, t("cal.workWeek")), h("p", { class: "hint" }, t("cal.workWeekHint")), week.el),
      h("label", { class: "check" }, holidays, t("cal.holidays")),
      h("p", { class: "hint" }, t("cal.holidaysHint")),
      error,
    ),
    h("footer", { class: "dialog-actions" }, del, h("span", { class: "spacer" }), h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel")), save),
  );
  const dlg = h("dialog", { id: "calendar-dialog" }, form);
  const fail = (e: unknown): void => {
    const x = explain(e as never);
    error.textContent = x.text;
    error.hidden = false;
    if (x.input) form.querySelector<HTMLElement>(`#${x.input}`)?.focus();
  };
  const remove = async (): Promise<void> => {
    if (!c || !(await confirmDialog(t("cal.deleteConfirm", { name: c.name, n: c.events }), t("common.delete")))) return;
    try {
      await api.delete_calendar(c.id);
      close();
      toast(t("cal.deleted"));
      await loadCalendars();
      eventsChanged();
      void loadStatus().catch(() => undefined);
    } catch (e) {
      fail(e);
    }
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    save.disabled = true;
    api
      .save_calendar({
        id: c?.id ?? null,
        name: name.value.trim(),
        color: color.value,
        visible: c?.visible ?? true,
        default_alarms: alarms.value(),
        work_week: week.value(),
        holidays: holidays.checked,
      })
      .then(async () => {
        close();
        await loadCalendars();
        eventsChanged();
      })
      .catch(fail)
      .finally(() => (save.disabled = false));
  });
  showDialog(dlg);
  name.focus();
}
