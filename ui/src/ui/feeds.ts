/**
 * ICS subscriptions in the sidebar: the "Add calendar → From URL…" dialog
 * (`#subscribe-dialog`), and under a subscribed calendar its status (last
 * refresh, last error in plain words) with "Refresh now" and
 * "Unsubscribe". A refresh the host does in the background reaches this
 * through `kairos://data-changed` (main.ts reloads the calendars).
 */
import { api, type SubscriptionView } from "../ipc";
import { explain } from "../lib/errors";
import { FEED_KINDS, feedProblemText, feedStatus } from "../lib/feeds";
import { locale, t, type Key } from "../i18n";
import { eventsChanged, loadCalendars, state } from "../state";
import { dialogHeader, field, h, option, showDialog, toast } from "./dom";
import { confirmDialog } from "./scope";

/** Refresh intervals offered, minutes. */
const EVERY = [15, 30, 60, 360, 1440, 10080];

async function reload(): Promise<void> {
  await loadCalendars();
  eventsChanged();
}

/** The status line and buttons under a subscribed calendar. */
export function feedRow(s: SubscriptionView): HTMLElement {
  const st = feedStatus(s, state.status.time_zone, locale());
  const busy = (on: boolean): void => el.querySelectorAll("button").forEach((b) => (b.disabled = on));
  const refresh = async (): Promise<void> => {
    busy(true);
    el.classList.add("is-busy");
    try {
      await api.refresh_subscription(s.calendar_id);
      await reload();
    } catch (e) {
      toast(explain(e as never).text, "error");
      busy(false);
      el.classList.remove("is-busy");
    }
  };
  const remove = async (): Promise<void> => {
    if (!(await confirmDialog(t("feed.unsubscribeConfirm", { name: s.calendar }), t("feed.unsubscribe")))) return;
    try {
      await api.remove_subscription(s.calendar_id);
      toast(t("feed.unsubscribed"));
      await reload();
    } catch (e) {
      toast(explain(e as never).text, "error");
    }
  };
  const el = h(
    "div",
    { class: `feed-status${st.problem ? " has-error" : ""}`, "data-feed-calendar": String(s.calendar_id), title: st.title },
    h("span", { class: "feed-when" }, st.text),
    st.problem ? h("span", { class: "feed-error", role: "status" }, st.problem) : null,
    h(
      "span",
      { class: "feed-actions" },
      h("button", { type: "button", class: "link feed-refresh", onclick: () => void refresh() }, t("feed.refreshNow")),
      h("button", { type: "button", class: "link feed-remove", onclick: () => void remove() }, t("feed.unsubscribe")),
    ),
  );
  return el;
}

/** Plain words for a failed subscribe, with the detail on a line of its own. */
function subscribeError(e: unknown): { text: string; detail: string | null; input: string | null } {
  const err = e as { kind: string; message: string };
  if (FEED_KINDS.includes(err.kind as never)) {
    return { text: feedProblemText(err as never), detail: err.message, input: err.kind === "feed_calendar_in_use" ? "sub-name" : "sub-url" };
  }
  if (err.kind === "invalid" && err.message.startsWith("interval:")) return { text: err.message, detail: null, input: "sub-every" };
  const x = explain(e as never);
  return { text: x.text, detail: null, input: x.input === "cal-name" ? "sub-name" : x.input };
}

/** "Add calendar → From URL…". */
export function openSubscribe(): void {
  const close = (): void => dlg.close();
  const url = h("input", { id: "sub-url", type: "url", placeholder: t("feed.urlPh"), autocomplete: "off", spellcheck: "false" });
  const name = h("input", { id: "sub-name", type: "text", placeholder: t("feed.namePh"), autocomplete: "off" });
  const every = h("select", { id: "sub-every" }, ...EVERY.map((m) => option(String(m), t(`feed.every.${m}` as Key), m === 60)));
  const error = h("p", { id: "sub-error", role: "alert", class: "form-error", hidden: true });
  const detail = h("p", { id: "sub-error-detail", class: "hint", hidden: true });
  const save = h("button", { type: "submit", id: "sub-save", class: "primary" }, t("feed.subscribe"));
  const cancel = h("button", { type: "button", class: "ghost", onclick: close }, t("common.cancel"));
  const form = h(
    "form",
    { novalidate: true },
    dialogHeader(t("feed.title"), close),
    h(
      "div",
      { class: "dialog-body" },
      field(t("feed.url"), url),
      h("p", { class: "hint" }, t("feed.urlHint")),
      h("div", { class: "row" }, field(t("feed.name"), name), field(t("feed.every"), every)),
      error,
      detail,
    ),
    h("footer", { class: "dialog-actions" }, h("span", { class: "spacer" }), cancel, save),
  );
  const dlg = h("dialog", { id: "subscribe-dialog" }, form);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    save.disabled = true;
    save.textContent = t("feed.fetching");
    error.hidden = detail.hidden = true;
    form.querySelectorAll("[aria-invalid]").forEach((x) => x.removeAttribute("aria-invalid"));
    api
      .add_subscription({ url: url.value.trim(), calendar: name.value.trim(), every_minutes: Number(every.value) })
      .then(async (s) => {
        close();
        toast(t("feed.added", { name: s.calendar }));
        await reload();
      })
      .catch((e: unknown) => {
        const x = subscribeError(e);
        error.textContent = x.text;
        error.hidden = false;
        detail.textContent = x.detail ?? "";
        detail.hidden = !x.detail;
        const target = x.input ? form.querySelector<HTMLElement>(`#${x.input}`) : null;
        target?.setAttribute("aria-invalid", "true");
        target?.focus();
      })
      .finally(() => {
        save.disabled = false;
        save.textContent = t("feed.subscribe");
      });
  });
  showDialog(dlg);
  url.focus();
}
