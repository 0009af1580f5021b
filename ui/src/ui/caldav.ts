/**
 * CalDAV accounts: the "Add calendar → CalDAV account…" dialog
 * (`#caldav-dialog`: sign in, then choose the calendars), and in the
 * sidebar each account with its status (syncing, last sync, last error in
 * plain words), "Sync now" and "Remove account". The first sync runs in
 * the host's background loop: while an account has neither synced nor
 * failed, the list is read again every few seconds (bounded); a sync that
 * changed calendars also reaches this through `kairos://data-changed`.
 */
import { api, type ApiError, type CaldavAccountView, type CaldavDiscovery, type CaldavLogin } from "../ipc";
import { explain } from "../lib/errors";
import { accountName, accountStatus, caldavField, CALDAV_KINDS, defaultChosen, dialogProblem, holds } from "../lib/caldav";
import { locale, t } from "../i18n";
import { eventsChanged, loadCalendars, state, subscribe } from "../state";
import { dialogHeader, field, h, showDialog, toast } from "./dom";
import { confirmDialog } from "./scope";
import { openAccountEdit } from "./caldav-edit";
import { caSection, calendarChoice } from "./caldav-parts";

/** How often, and how many times, the list is read while a first sync runs. */
const POLL_MS = 1500;
const POLL_MAX = 200;
let polls = 0;
let pollTimer: ReturnType<typeof setTimeout> | null = null;

async function reload(): Promise<void> {
  await loadCalendars();
  eventsChanged();
}

/** Reads the accounts again while one of them has not finished its first sync. */
export function watchSyncing(): void {
  const waiting = state.caldavAccounts.some((a) => !a.synced_at && !a.last_error);
  if (!waiting) polls = 0;
  if (!waiting || pollTimer || polls >= POLL_MAX) return;
  polls += 1;
  pollTimer = setTimeout(() => {
    pollTimer = null;
    void reload().catch(() => undefined);
  }, POLL_MS);
}

/** One account in the sidebar: name, status line, Sync now, Remove. */
export function accountRow(a: CaldavAccountView): HTMLElement {
  const st = accountStatus(a, state.status.time_zone, locale());
  const busy = (on: boolean): void => {
    el.querySelectorAll("button").forEach((b) => (b.disabled = on));
    el.classList.toggle("is-busy", on);
  };
  const sync = async (): Promise<void> => {
    busy(true);
    el.querySelector(".dav-when")!.textContent = t("dav.syncing");
    try {
      await api.sync_caldav_account(a.id);
      await reload();
    } catch (e) {
      toast(explain(e as never).text, "error");
      busy(false);
    }
  };
  const remove = async (): Promise<void> => {
    if (!(await confirmDialog(t("dav.removeConfirm", { name: accountName(a) }), t("dav.remove")))) return;
    try {
      await api.remove_caldav_account(a.id);
      toast(t("dav.removed"));
      await reload();
    } catch (e) {
      toast(explain(e as never).text, "error");
    }
  };
  const el = h(
    "li",
    { class: `dav-account${st.problem ? " has-error" : ""}${st.syncing ? " is-syncing" : ""}`, "data-account-id": String(a.id), title: st.title },
    h("span", { class: "dav-name" }, accountName(a)),
    h("span", { class: "dav-when", role: "status" }, st.text),
    st.problem ? h("span", { class: "dav-error" }, st.problem) : null,
    h(
      "span",
      { class: "dav-actions" },
      h("button", { type: "button", class: "link dav-sync", onclick: () => void sync() }, t("dav.syncNow")),
      h("button", { type: "button", class: "link dav-edit", onclick: () => openAccountEdit(a, reload) }, t("dav.edit")),
      h("button", { type: "button", class: "link dav-remove", onclick: () => void remove() }, t("dav.remove")),
    ),
  );
  return el;
}

/** The accounts under the calendar list (nothing when there are none). */
export function accountsPanel(): HTMLElement {
  const list = h("ul", { id: "caldav-accounts", class: "dav-list" });
  const head = h("h3", { class: "dav-heading" }, t("dav.heading"));
  const wrap = h("section", { class: "dav-panel" }, head, list);
  const render = (): void => {
    wrap.hidden = state.caldavAccounts.length === 0;
    list.replaceChildren(...state.caldavAccounts.map(accountRow));
    watchSyncing();
  };
  render();
  subscribe("calendars", render);
  return wrap;
}

/** The account a calendar syncs with, if any. */
export function accountOf(calendarId: number): CaldavAccountView | undefined {
  return state.caldavAccounts.find((a) => a.calendars.some((c) => c.calendar_id === calendarId));
}

/** "Add calendar → CalDAV account…". */
export function openCaldav(): void {
  const close = (): void => dlg.close();
  const url = h("input", { id: "dav-url", type: "text", placeholder: t("dav.urlPh"), autocomplete: "off", spellcheck: "false" });
  const user = h("input", { id: "dav-user", type: "text", autocomplete: "username", spellcheck: "false" });
  const password = h("input", { id: "dav-password", type: "password", autocomplete: "current-password" });
  const ca = h("textarea", { id: "dav-ca", rows: 3, placeholder: t("dav.caPh"), spellcheck: "false" });
  const error = h("p", { id: "dav-error", role: "alert", class: "form-error", hidden: true });
  const detail = h("p", { id: "dav-error-detail", class: "hint", hidden: true });
  const progress = h("p", { id: "dav-progress", class: "hint", role: "status", hidden: true });
  const signIn = h("div", { class: "dav-step", id: "dav-step-login" },
    field(t("dav.url"), url),
    h("p", { class: "hint" }, t("dav.urlHint")),
    h("div", { class: "row" }, field(t("dav.user"), user), field(t("dav.password"), password)),
    h("p", { class: "hint" }, t("dav.passwordHint")),
    caSection(ca, t("dav.caHint")),
  );
  const choices = h("ul", { id: "dav-calendars", class: "dav-choices" });
  const choose = h("div", { class: "dav-step", id: "dav-step-choose", hidden: true },
    h("p", { class: "field-caption" }, t("dav.choose")),
    h("p", { class: "hint" }, t("dav.chooseHint")),
    choices,
  );
  const back = h("button", { type: "button", id: "dav-back", class: "ghost", hidden: true, onclick: () => step("login") }, t("dav.back"));
  const next = h("button", { type: "submit", id: "dav-next", class: "primary" }, t("dav.next"));
  const cancel = h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel"));
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(t("dav.title"), close),
    h("div", { class: "dialog-body" }, signIn, choose, progress, error, detail),
    h("footer", { class: "dialog-actions" }, back, h("span", { class: "spacer" }), cancel, next),
  );
  const dlg = h("dialog", { id: "caldav-dialog", "data-step": "login" }, form);
  let found: CaldavDiscovery | null = null;
  const login = (): CaldavLogin => ({ url: url.value.trim(), user: user.value.trim(), password: password.value, ...(ca.value.trim() ? { ca_pem: ca.value } : {}) });
  const chosen = (): string[] => [...choices.querySelectorAll<HTMLInputElement>("input.dav-pick:checked")].map((b) => b.value);

  function step(s: "login" | "choose"): void {
    dlg.dataset.step = s;
    signIn.hidden = s !== "login";
    choose.hidden = s !== "choose";
    back.hidden = s !== "choose";
    next.textContent = s === "login" ? t("dav.next") : t("dav.add");
    error.hidden = detail.hidden = true;
    next.disabled = s === "choose" && chosen().length === 0;
  }
  const waiting = (text: string | null): void => {
    progress.textContent = text ?? "";
    progress.hidden = text === null;
    next.disabled = back.disabled = text !== null;
    dlg.classList.toggle("is-busy", text !== null);
  };
  const fail = (e: unknown): void => {
    waiting(null);
    const err = e as ApiError;
    const p = dialogProblem(err);
    const ours = CALDAV_KINDS.includes(err.kind);
    error.textContent = p.text;
    error.hidden = false;
    detail.textContent = p.detail;
    detail.hidden = p.detail === "";
    const id = p.ca && !ours ? "dav-ca" : ours ? caldavField(err.kind) : err.message.startsWith("password") ? "dav-password" : err.message.startsWith("user") ? "dav-user" : "dav-url";
    if (p.ca) (form.querySelector("#dav-ca-details") as HTMLDetailsElement).open = true;
    if (id && dlg.dataset.step !== "login") step("login");
    const target = id ? form.querySelector<HTMLElement>(`#${id}`) : null;
    target?.setAttribute("aria-invalid", "true");
    target?.focus();
  };
  const showChoices = (d: CaldavDiscovery): void => {
    const ticked = new Set(defaultChosen(d.calendars));
    choices.replaceChildren(
      ...(d.calendars.length === 0
        ? [h("li", { class: "hint" }, t("dav.none"))]
        : d.calendars.map((c) => {
            const li = calendarChoice(c, "dav-pick", ticked.has(c.name), h("span", { class: "muted dav-holds" }, holds(c)));
            li.querySelector("input")?.addEventListener("change", () => (next.disabled = chosen().length === 0));
            return li;
          })),
    );
    step("choose");
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    form.querySelectorAll("[aria-invalid]").forEach((x) => x.removeAttribute("aria-invalid"));
    error.hidden = detail.hidden = true;
    if (dlg.dataset.step === "login") {
      waiting(t("dav.finding"));
      api
        .caldav_discover(login())
        .then((d) => {
          waiting(null);
          found = d;
          showChoices(d);
        })
        .catch(fail);
      return;
    }
    if (!found || chosen().length === 0) return;
    waiting(t("dav.adding"));
    api
      .add_caldav_account({ ...login(), calendars: chosen() })
      .then(async (a) => {
        close();
        toast(t("dav.added", { user: accountName(a) }));
        await reload();
      })
      .catch(fail);
  });
  showDialog(dlg);
  url.focus();
}
