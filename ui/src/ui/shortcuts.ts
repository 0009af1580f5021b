/** Keyboard shortcuts and their help dialog. */
import { t, type Key } from "../i18n";
import { dialogOpen, h, showDialog } from "./dom";

export const SHORTCUTS: readonly [string, Key][] = [
  ["n", "help.n"],
  ["t", "help.t"],
  ["m", "help.m"],
  ["w", "help.w"],
  ["d", "help.d"],
  ["a", "help.a"],
  ["← →", "help.arrows"],
  ["r", "help.r"],
  ["Esc", "help.esc"],
  ["?", "help.help"],
];

export interface ShortcutActions {
  newEvent(): void;
  today(): void;
  view(v: "month" | "week" | "day" | "agenda"): void;
  prev(): void;
  next(): void;
  reminders(): void;
  /** Closes the topmost non-modal thing (the reminders panel); false if none. */
  escape(): boolean;
}

/** Whether a key event was typed into a form control. */
function typing(e: KeyboardEvent): boolean {
  const el = e.target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

export function openHelp(): void {
  if (document.getElementById("shortcuts-help")) return;
  const dlg = h(
    "dialog",
    { id: "shortcuts-help", class: "small" },
    h("h2", null, t("help.title")),
    h("dl", { class: "shortcuts" }, ...SHORTCUTS.flatMap(([k, label]) => [h("dt", null, h("kbd", null, k)), h("dd", null, t(label))])),
    h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "primary", onclick: () => dlg.close() }, t("common.close"))),
  );
  showDialog(dlg);
}

/** Installs the handler; returns its remover. */
export function installShortcuts(a: ShortcutActions): () => void {
  const onKey = (e: KeyboardEvent): void => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    // Modal dialogs handle Escape themselves (the browser's cancel).
    if (dialogOpen()) return;
    if (e.key === "Escape") {
      if (a.escape()) e.preventDefault();
      return;
    }
    if (typing(e)) return;
    const actions: Record<string, () => void> = {
      n: a.newEvent,
      t: a.today,
      m: () => a.view("month"),
      w: () => a.view("week"),
      d: () => a.view("day"),
      a: () => a.view("agenda"),
      ArrowLeft: a.prev,
      ArrowRight: a.next,
      r: a.reminders,
      "?": openHelp,
    };
    const f = actions[e.key];
    if (f) {
      e.preventDefault();
      f();
    }
  };
  document.addEventListener("keydown", onKey);
  return () => document.removeEventListener("keydown", onKey);
}
