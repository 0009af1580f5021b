/** ICS import (file dialog, then which calendar) and export (all or one). */
import { api, pickIcsToOpen, pickIcsToSave } from "../ipc";
import { explain } from "../lib/errors";
import { t } from "../i18n";
import { eventsChanged, loadCalendars, loadStatus, state } from "../state";
import { dialogHeader, field, h, option, showDialog, toast } from "./dom";

const baseName = (path: string): string => path.split(/[\\/]/).pop() ?? path;

/** Picks a file, asks for the calendar, imports. */
export async function importIcs(): Promise<void> {
  let path: string | null;
  try {
    path = await pickIcsToOpen();
  } catch (e) {
    toast(explain(e as never).text, "error");
    return;
  }
  if (!path) return;
  const file = baseName(path);
  const guess = file.replace(/\.(ics|ical|icalendar|ifb)$/i, "") || "Imported";
  const close = (): void => dlg.close();
  const name = h("input", { id: "import-calendar", type: "text", list: "import-calendars", value: state.calendars[0]?.name ?? guess, autocomplete: "off" });
  const names = h("datalist", { id: "import-calendars" }, ...state.calendars.map((c) => option(c.name, c.name)), option(guess, guess));
  const error = h("p", { id: "import-error", role: "alert", class: "form-error", hidden: true });
  const go = h("button", { type: "submit", id: "import-go", class: "primary" }, t("ics.import"));
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(t("ics.importTitle"), close),
    h(
      "div",
      { class: "dialog-body" },
      field(t("ics.file"), h("code", { class: "file-name", title: path }, file)),
      field(t("ics.into"), name, h("span", { class: "hint" }, t("ics.intoHint"))),
      names,
      error,
    ),
    h("footer", { class: "dialog-actions" }, h("span", { class: "spacer" }), h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel")), go),
  );
  const dlg = h("dialog", { id: "import-dialog", class: "small" }, form);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    go.disabled = true;
    go.textContent = t("common.working");
    api
      .import_ics({ path: path ?? "", calendar: name.value.trim() })
      .then(async (s) => {
        if (s.warnings.length === 0) {
          close();
          toast(t("ics.imported", { events: s.events, changed: s.changed, scheduled: s.scheduled }));
        } else {
          showWarnings(form, s.events, s.warnings, close);
        }
        await loadCalendars();
        eventsChanged();
        void loadStatus().catch(() => undefined);
      })
      .catch((err: unknown) => {
        error.textContent = explain(err as never).text;
        error.hidden = false;
      })
      .finally(() => {
        go.disabled = false;
        go.textContent = t("ics.import");
      });
  });
  showDialog(dlg);
  name.select();
}

/** Replaces the import form's body with what was imported and the list
 * of problems the file had (each skipped or repaired), and one Close. */
function showWarnings(form: HTMLFormElement, events: number, warnings: string[], close: () => void): void {
  const body = form.querySelector(".dialog-body");
  const actions = form.querySelector(".dialog-actions");
  if (!body || !actions) return;
  body.replaceChildren(
    h("p", { id: "import-result", role: "status" }, t("ics.importedWarnings", { events, warnings: warnings.length })),
    h("ul", { id: "import-warnings", class: "warnings" }, ...warnings.map((w) => h("li", {}, w))),
  );
  actions.replaceChildren(h("span", { class: "spacer" }), h("button", { type: "button", id: "import-done", class: "primary", onclick: close }, t("common.close")));
}

/** Asks what to export, then where, and exports. */
export function exportIcs(): void {
  const close = (): void => dlg.close();
  const which = h(
    "select",
    { id: "export-calendar" },
    option("", t("ics.all"), true),
    ...state.calendars.map((c) => option(String(c.id), c.name)),
  );
  const error = h("p", { id: "export-error", role: "alert", class: "form-error", hidden: true });
  const go = h("button", { type: "submit", id: "export-go", class: "primary" }, t("ics.export"));
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(t("ics.exportTitle"), close),
    h("div", { class: "dialog-body" }, field(t("ics.which"), which), error),
    h("footer", { class: "dialog-actions" }, h("span", { class: "spacer" }), h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel")), go),
  );
  const dlg = h("dialog", { id: "export-dialog", class: "small" }, form);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const id = which.value === "" ? null : Number(which.value);
    const cal = state.calendars.find((c) => c.id === id);
    const fileName = `${(cal?.name ?? "kairos").replace(/[\\/:*?"<>|]+/g, "_")}.ics`;
    void (async () => {
      try {
        const path = await pickIcsToSave(fileName);
        if (!path) return;
        const n = await api.export_ics({ path, calendar_id: id });
        close();
        toast(t("ics.exported", { n }));
      } catch (err) {
        error.textContent = explain(err as never).text;
        error.hidden = false;
      }
    })();
  });
  showDialog(dlg);
}
