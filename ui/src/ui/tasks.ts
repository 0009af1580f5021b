/**
 * The tasks panel in the sidebar (`#tasks`): open tasks, due soonest first
 * (undated last), each with a done checkbox, its due time (red when
 * overdue) and priority; a click opens the task in the editor, "+" makes a
 * new task due today at 17:00. Ticking one off calls `complete_task`: its
 * reminders stop, a notification of it closes.
 */
import { api, type TaskItem } from "../ipc";
import { formatWall, nowWall, toDateStr } from "../lib/dates";
import { explain } from "../lib/errors";
import { locale, t, type Key } from "../i18n";
import { defaultCalendarId, eventsChanged, loadStatus, state, subscribe } from "../state";
import { h, toast } from "./dom";
import { editEvent, openEditor } from "./editor";

/** The label of a `PRIORITY` (RFC 5545: 1–4 high, 5 medium, 6–9 low). */
export function priorityKey(p: number | null): Key {
  if (p === null || p < 1 || p > 9) return "task.prio.none";
  return p < 5 ? "task.prio.high" : p === 5 ? "task.prio.medium" : "task.prio.low";
}

function row(x: TaskItem): HTMLElement {
  const box = h("input", { type: "checkbox", class: "task-done", "aria-label": t("task.done", { title: x.title }) });
  box.style.setProperty("--cal-color", x.color);
  box.addEventListener("change", () => {
    box.disabled = true;
    api
      .complete_task(x.event)
      .then(() => {
        toast(t("task.doneToast"));
        eventsChanged();
        void loadStatus().catch(() => undefined);
      })
      .catch((e: unknown) => {
        box.checked = false;
        box.disabled = false;
        toast(explain(e as never).text, "error");
      });
  });
  const due = x.due ? t("task.due", { when: formatWall(x.due, locale(), true) }) : t("task.noDue");
  const prio = priorityKey(x.priority);
  return h(
    "li",
    { class: `task-row${x.overdue ? " overdue" : ""}`, "data-uid": x.event.uid },
    box,
    h(
      "button",
      { type: "button", class: "task-open", onclick: () => void editEvent(x.event) },
      h("span", { class: "task-title" }, x.title),
      h("span", { class: "task-due muted" }, x.overdue ? `${t("task.overdue")} · ${due}` : due),
    ),
    prio === "task.prio.none" ? null : h("span", { class: `task-prio ${prio.slice(10)}`, title: `${t("task.priority")}: ${t(prio)}` }, "!"),
  );
}

/** Opens the editor on a new task due today at 17:00. */
export async function newTask(): Promise<void> {
  const cal = defaultCalendarId();
  if (cal === null) return;
  try {
    const due = `${toDateStr(nowWall(state.status.time_zone))}T17:00`;
    const draft = await api.new_draft(cal, due);
    draft.task = { done: false, priority: null };
    draft.end = draft.start;
    openEditor({ ref: null, draft, recurring: false });
  } catch (e) {
    toast(explain(e as never).text, "error");
  }
}

export function tasksPanel(): HTMLElement {
  const list = h("ul", { class: "task-list", id: "task-list" });
  let asked = 0;
  const load = (): void => {
    const mine = ++asked;
    api
      .list_tasks()
      .then((items) => {
        if (mine !== asked) return;
        list.replaceChildren(...(items.length ? items.map(row) : [h("li", { class: "muted task-empty" }, t("task.empty"))]));
      })
      .catch((e: unknown) => toast(explain(e as never).text, "error"));
  };
  load();
  subscribe("events", load);
  subscribe("calendars", load);
  return h(
    "section",
    { id: "tasks", class: "tasks" },
    h(
      "div",
      { class: "sidebar-head" },
      h("h2", null, t("task.heading")),
      h("button", { type: "button", id: "add-task", class: "icon-btn", title: t("task.add"), "aria-label": t("task.add"), onclick: () => void newTask() }, "+"),
    ),
    list,
  );
}
