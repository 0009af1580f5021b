/**
 * Kairos's window: toolbar, calendars sidebar, the calendar views, the
 * reminders panel and the status bar, wired to the backend through `ipc`.
 */
import "./style/app.css";
import { api, EVENTS, onEvent, type EventRef, type SyncStatus } from "./ipc";
import { nowWall, toDateStr, toMinuteStr } from "./lib/dates";
import { explain } from "./lib/errors";
import { resolveLang, setLang, t, type Key } from "./i18n";
import { eventsChanged, loadCalendars, loadShown, loadStatus, setSync, state, subscribe, withScope } from "./state";
import { CalendarView, VIEWS, type ViewName } from "./ui/calendar-view";
import { h, toast } from "./ui/dom";
import { editEvent, newEvent } from "./ui/editor";
import { icon } from "./ui/icons";
import { remindersPanel, type RemindersPanel } from "./ui/reminders";
import { openSettings } from "./ui/settings";
import { installShortcuts, openHelp } from "./ui/shortcuts";
import { sidebar } from "./ui/sidebar";
import { statusBar } from "./ui/statusbar";

const VIEW_LABEL: Record<ViewName, Key> = { month: "view.month", week: "view.week", day: "view.day", agenda: "view.agenda" };

let view: CalendarView | null = null;
let panel: RemindersPanel | null = null;
let dispose: (() => void) | null = null;
let builtLang = "";

/** Theme: `system` follows prefers-color-scheme (CSS); light/dark override it. */
function applyTheme(theme: string): void {
  const root = document.documentElement;
  if (theme === "light" || theme === "dark") root.dataset.theme = theme;
  else delete root.dataset.theme;
}

/** Where `n` starts a new event: the next full hour today, or 09:00 on the shown day. */
function newEventStart(): string {
  const now = nowWall(state.status.time_zone);
  const v = view?.fc.view;
  if (v && (now < v.currentStart || now >= v.currentEnd)) return `${toDateStr(v.currentStart)}T09:00`;
  const next = new Date(now.getTime());
  next.setUTCMinutes(0, 0, 0);
  next.setUTCHours(next.getUTCHours() + 1);
  return toMinuteStr(next);
}

function toolbar(titleEl: HTMLElement): HTMLElement {
  const btn = (id: string, label: string, content: Node | string, onclick: () => void, cls = "icon-btn"): HTMLButtonElement =>
    h("button", { type: "button", id, class: cls, title: label, "aria-label": label, onclick }, content);
  const views = h(
    "div",
    { class: "segmented", role: "group" },
    ...VIEWS.map((v) => h("button", { type: "button", "data-view": v, onclick: () => view?.setView(v) }, t(VIEW_LABEL[v]))),
  );
  return h(
    "header",
    { class: "toolbar" },
    btn("sidebar-toggle", t("tb.sidebar"), icon("menu"), () => document.body.classList.toggle("no-sidebar")),
    h("button", { type: "button", id: "today", class: "outline", onclick: () => view?.fc.today() }, t("tb.today")),
    h(
      "div",
      { class: "nav" },
      btn("prev", t("tb.prev"), icon("left"), () => view?.fc.prev()),
      btn("next", t("tb.next"), icon("right"), () => view?.fc.next()),
    ),
    titleEl,
    h("span", { class: "spacer" }),
    views,
    h("button", { type: "button", id: "new-event", class: "primary", onclick: () => void newEvent(newEventStart()) }, icon("plus"), t("tb.newEvent")),
    panel?.button ?? null,
    btn("settings-btn", t("tb.settings"), icon("gear"), openSettings),
    btn("help-btn", t("tb.help"), icon("help"), openHelp),
  );
}

/** Builds (or rebuilds, on a language change) the whole window. */
function build(onLoaded: () => void): void {
  const keep = view ? { view: view.view, date: view.fc.getDate() } : undefined;
  const panelWasOpen = panel?.isOpen() ?? false;
  view?.destroy();
  dispose?.();
  builtLang = state.settings.language;
  const app = document.getElementById("app") ?? document.body.appendChild(h("div", { id: "app" }));
  dispose = withScope(() => {
    panel = remindersPanel();
    const title = h("h1", { id: "view-title" });
    const calEl = h("div", { id: "calendar", class: "calendar" });
    app.replaceChildren(toolbar(title), h("div", { class: "body" }, sidebar(), h("main", { class: "main" }, calEl), panel.el), statusBar());
    view = new CalendarView(
      calEl,
      (c) => {
        title.textContent = c.title;
        app.querySelectorAll<HTMLElement>("[data-view]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === c.view)));
      },
      onLoaded,
      keep,
    );
    subscribe("events", () => view?.refetch());
    if (panelWasOpen) panel.open();
  });
}

async function boot(): Promise<void> {
  const [settings] = await Promise.all([api.get_settings(), loadStatus(), loadCalendars()]);
  state.settings = settings;
  applyTheme(settings.theme);
  setLang(resolveLang(settings.language, navigator.language));
  let ready = false;
  build(() => {
    if (!ready) {
      ready = true;
      document.body.dataset.ready = "1";
    }
  });
  void loadShown().catch(() => undefined);

  subscribe("settings", () => {
    const s = state.settings;
    applyTheme(s.theme);
    setLang(resolveLang(s.language, navigator.language));
    if (s.language !== builtLang) build(() => undefined);
    else {
      view?.fc.setOption("firstDay", s.week_start);
      eventsChanged();
    }
  });
  installShortcuts({
    newEvent: () => void newEvent(newEventStart()),
    today: () => view?.fc.today(),
    view: (v) => view?.setView(v),
    prev: () => view?.fc.prev(),
    next: () => view?.fc.next(),
    reminders: () => panel?.toggle(),
    escape: () => {
      if (!panel?.isOpen()) return false;
      panel.close();
      return true;
    },
  });

  const refreshReminders = (): void => void Promise.all([loadShown(), loadStatus()]).catch(() => undefined);
  await Promise.all([
    onEvent(EVENTS.remindersChanged, refreshReminders),
    onEvent(EVENTS.showReminders, () => {
      panel?.open();
      refreshReminders();
    }),
    onEvent(EVENTS.dataChanged, () => {
      void loadCalendars().then(eventsChanged, () => undefined);
      void loadStatus().catch(() => undefined);
    }),
    onEvent<EventRef>(EVENTS.openEvent, (ref) => void editEvent(ref)),
    onEvent<SyncStatus>(EVENTS.syncChanged, setSync),
  ]);
  // Listening now: the shell sends what it made this window for (the
  // reminder panel, an event), which would have been lost before this.
  await api.ui_ready();
}

boot().catch((e: unknown) => {
  const msg = explain(e as never).text;
  document.body.replaceChildren(h("div", { class: "fatal" }, h("p", null, t("app.loadFailed", { message: msg }))));
  toast(msg, "error");
});

