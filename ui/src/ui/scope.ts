/** "Only this / this and following / all" for a recurring event. */
import type { Scope } from "../ipc";
import { t, type Key } from "../i18n";
import { h, showDialog } from "./dom";

export type ScopeAction = "save" | "delete" | "move";

const TITLES: Record<ScopeAction, Key> = {
  save: "scope.saveTitle",
  delete: "scope.deleteTitle",
  move: "scope.moveTitle",
};

/** Asks which occurrences; `null` when the person cancels. */
export function askScope(action: ScopeAction): Promise<Scope | null> {
  return new Promise((resolve) => {
    let chosen: Scope | null = null;
    const choose = (s: Scope) => () => {
      chosen = s;
      dlg.close();
    };
    const btn = (s: Scope, key: Key, primary = false) =>
      h("button", { type: "button", "data-scope": s, class: primary ? "primary" : "", onclick: choose(s) }, t(key));
    const dlg = h(
      "dialog",
      { id: "scope-dialog", class: "small", "aria-labelledby": "scope-title" },
      h("h2", { id: "scope-title" }, t(TITLES[action])),
      h("p", null, t("scope.text")),
      h(
        "div",
        { class: "scope-buttons" },
        btn("this", "scope.this", true),
        btn("this_and_following", "scope.following"),
        btn("all", "scope.all"),
        h("button", { type: "button", class: "ghost", onclick: () => dlg.close() }, t("common.cancel")),
      ),
    );
    showDialog(dlg, () => resolve(chosen));
  });
}

/** Asks to confirm something that cannot be undone. */
export function confirmDialog(text: string, okLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    let ok = false;
    const dlg = h(
      "dialog",
      { id: "confirm-dialog", class: "small" },
      h("p", null, text),
      h(
        "div",
        { class: "dialog-actions" },
        h("button", { type: "button", class: "ghost", onclick: () => dlg.close() }, t("common.cancel")),
        h("button", { type: "button", class: "danger", id: "confirm-ok", onclick: () => ((ok = true), dlg.close()) }, okLabel),
      ),
    );
    showDialog(dlg, () => resolve(ok));
  });
}
