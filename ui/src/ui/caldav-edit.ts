/**
 * "Edit account" of a CalDAV account (`#caldav-edit-dialog`): how often it
 * syncs, which calendars (with "Refresh list" for calendars made on the
 * server since: shown unticked, marked new), a new password and a new CA
 * certificate, or none (checked with the server, together, before they are
 * kept). Unticking a calendar keeps its events in
 * Kairos as an ordinary calendar; nothing on the server changes.
 */
import { api, type ApiError, type CaldavAccountView } from "../ipc";
import { accountName, dialogProblem } from "../lib/caldav";
import { t } from "../i18n";
import { dialogHeader, field, h, showDialog, toast } from "./dom";
import { caSection, calendarChoice } from "./caldav-parts";

/** The intervals offered (seconds); the account's own is added when it is another. */
export const INTERVALS = [60, 300, 900, 1800, 3600, 21600, 86400];

/** An interval in words ("5 min", "1 h", "1 day"). */
export function intervalText(s: number): string {
  if (s === 86400) return t("dav.every.day");
  if (s % 86400 === 0) return t("dav.every.days", { n: s / 86400 });
  if (s % 3600 === 0) return t("dav.every.hours", { n: s / 3600 });
  if (s % 60 === 0) return t("dav.every.minutes", { n: s / 60 });
  return t("dav.every.seconds", { n: s });
}

/** What the dialog asks to change, from the account and the dialog's state. */
export function editChanges(
  a: CaldavAccountView,
  ticked: string[],
  every: number,
  password: string,
  ca = "",
  noCa = false,
): { every_seconds: number | null; choose: string[]; unchoose: string[]; password: string | null; ca_pem?: string; no_ca?: boolean } {
  const was = new Set(a.calendars.filter((c) => c.calendar_id !== null).map((c) => c.name));
  const now = new Set(ticked);
  return {
    every_seconds: every === a.every_seconds ? null : every,
    choose: a.calendars.map((c) => c.name).filter((n) => now.has(n) && !was.has(n)),
    unchoose: a.calendars.map((c) => c.name).filter((n) => was.has(n) && !now.has(n)),
    password: password ? password : null,
    // A pasted certificate wins over "trust only the public authorities".
    ...(ca.trim() ? { ca_pem: ca } : noCa && a.private_ca ? { no_ca: true } : {}),
  };
}

export function openAccountEdit(start: CaldavAccountView, reload: () => Promise<void>): void {
  let a = start;
  const known = new Set(a.calendars.map((c) => c.name));
  const close = (): void => dlg.close();
  const every = h("select", { id: "dav-every" });
  const intervals = INTERVALS.includes(a.every_seconds) ? INTERVALS : [...INTERVALS, a.every_seconds].sort((x, y) => x - y);
  every.replaceChildren(...intervals.map((s) => h("option", { value: String(s), selected: s === a.every_seconds }, intervalText(s))));
  const list = h("ul", { id: "dav-edit-calendars", class: "dav-choices" });
  const password = h("input", { id: "dav-new-password", type: "password", autocomplete: "new-password" });
  const ca = h("textarea", { id: "dav-new-ca", rows: 3, placeholder: t("dav.caPh"), spellcheck: "false" });
  const noCa = h("input", { type: "checkbox", id: "dav-no-ca" });
  const noCaRow = a.private_ca ? h("label", { class: "check" }, noCa, h("span", null, t("dav.noCa"))) : null;
  const error = h("p", { id: "dav-edit-error", role: "alert", class: "form-error", hidden: true });
  const detail = h("p", { id: "dav-edit-detail", class: "hint", hidden: true });
  const progress = h("p", { id: "dav-edit-progress", class: "hint", role: "status", hidden: true });
  const ticked = (): string[] => [...list.querySelectorAll<HTMLInputElement>("input.dav-edit-pick:checked")].map((b) => b.value);
  const render = (keep: Set<string> | null): void => {
    list.replaceChildren(
      ...a.calendars.map((c) => {
        const on = keep ? keep.has(c.name) : c.calendar_id !== null;
        const isNew = !known.has(c.name);
        const li = calendarChoice(c, "dav-edit-pick", on, isNew ? h("span", { class: "dav-new" }, t("dav.new")) : null);
        if (isNew) li.dataset.new = "true";
        return li;
      }),
    );
  };
  const waiting = (text: string | null): void => {
    progress.textContent = text ?? "";
    progress.hidden = text === null;
    form.querySelectorAll<HTMLButtonElement>("button").forEach((b) => (b.disabled = text !== null));
    dlg.classList.toggle("is-busy", text !== null);
  };
  const fail = (e: unknown): void => {
    waiting(null);
    const err = e as ApiError;
    const p = dialogProblem(err);
    error.textContent = p.text;
    error.hidden = false;
    detail.textContent = p.detail;
    detail.hidden = p.detail === "";
    if (err.kind === "caldav_unauthorized") password.setAttribute("aria-invalid", "true");
    if (p.ca) {
      ca.setAttribute("aria-invalid", "true");
      caBox.open = true;
    }
  };
  const refresh = h(
    "button",
    {
      type: "button",
      id: "dav-refresh",
      class: "ghost",
      onclick: () => {
        const keep = new Set(ticked());
        error.hidden = detail.hidden = true;
        waiting(t("dav.refreshing"));
        api
          .refresh_caldav_account(a.id)
          .then((v) => {
            waiting(null);
            a = v;
            render(keep);
            // The sidebar's copy (a calendar dropped, the next Edit's "New").
            void reload().catch(() => undefined);
          })
          .catch(fail);
      },
    },
    t("dav.refresh"),
  );
  const caBox = caSection(ca, t("dav.caEditHint"), "dav-new-ca", noCaRow);
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(t("dav.editTitle", { name: accountName(a) }), close),
    h(
      "div",
      { class: "dialog-body" },
      field(t("dav.every"), every),
      h("div", { class: "dav-edit-head" }, h("p", { class: "field-caption" }, t("dav.calendars")), refresh),
      list,
      h("p", { class: "hint" }, t("dav.untickHint")),
      field(t("dav.newPassword"), password),
      h("p", { class: "hint" }, t("dav.newPasswordHint")),
      a.private_ca ? h("p", { class: "hint", id: "dav-ca-note" }, t("dav.caKept")) : null,
      caBox,
      progress,
      error,
      detail,
    ),
    h(
      "footer",
      { class: "dialog-actions" },
      h("span", { class: "spacer" }),
      h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel")),
      h("button", { type: "submit", id: "dav-save", class: "primary" }, t("common.save")),
    ),
  );
  const dlg = h("dialog", { id: "caldav-edit-dialog" }, form);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    password.removeAttribute("aria-invalid");
    ca.removeAttribute("aria-invalid");
    error.hidden = detail.hidden = true;
    const change = editChanges(a, ticked(), Number(every.value), password.value, ca.value, noCa.checked);
    const login = change.password !== null || change.ca_pem !== undefined || change.no_ca !== undefined;
    if (change.every_seconds === null && !change.choose.length && !change.unchoose.length && !login) {
      close();
      return;
    }
    waiting(change.password ? t("dav.checkingPassword") : login ? t("dav.checkingCa") : t("common.working"));
    api
      .edit_caldav_account({ id: a.id, ...change })
      .then(async () => {
        close();
        toast(t("dav.saved"));
        await reload();
      })
      .catch(fail);
  });
  render(null);
  showDialog(dlg);
  every.focus();
}
