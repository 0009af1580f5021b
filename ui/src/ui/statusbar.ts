/** The status bar: display zone, next reminder, do-not-disturb, notifier state, sync. */
import { api } from "../ipc";
import { formatInstant } from "../lib/dates";
import { explain } from "../lib/errors";
import { syncView } from "../lib/sync";
import { locale, t } from "../i18n";
import { state, subscribe, loadStatus } from "../state";
import { h, option, toast } from "./dom";
import { openSettingsAt } from "./settings";

export function statusBar(): HTMLElement {
  const el = h("footer", { id: "statusbar", class: "statusbar" });
  const pause = (p: "hour" | "until_tomorrow" | "off"): void => {
    api
      .pause_reminders(p)
      .then(() => loadStatus())
      .catch((e: unknown) => toast(explain(e as never).text, "error"));
  };
  const render = (): void => {
    const s = state.status;
    const tz = s.time_zone;
    const next = s.next[0];
    const parts: (HTMLElement | null)[] = [
      h("span", { id: "status-tz" }, t("st.tz", { tz })),
      h("span", { id: "status-next" }, next ? t("st.next", { title: next.title, time: formatInstant(next.trigger, tz, locale()) }) : t("st.noNext")),
    ];
    if (s.paused_until) {
      parts.push(
        h(
          "span",
          { id: "status-paused", class: "warn" },
          t("st.paused", { time: formatInstant(s.paused_until, tz, locale()) }),
          " ",
          h("button", { type: "button", class: "link", id: "status-resume", onclick: () => pause("off") }, t("st.resume")),
        ),
      );
    } else {
      const sel = h(
        "select",
        { id: "status-pause", class: "quiet-select", "aria-label": t("st.pause") },
        option("", t("st.pause"), true),
        option("hour", t("st.pauseHour")),
        option("until_tomorrow", t("st.pauseTomorrow")),
      );
      sel.addEventListener("change", () => sel.value && pause(sel.value as "hour" | "until_tomorrow"));
      parts.push(sel);
    }
    if (s.notifier !== "actions") {
      const text = t(s.notifier === "no_actions" ? "st.noActions" : "st.unavailable");
      parts.push(h("span", { id: "status-notifier", class: "warn", title: text }, text));
    }
    const sync = syncView(s.sync, tz, locale());
    if (sync) {
      parts.push(
        h("span", { id: "status-sync", class: `sync sync-${sync.tone}`, "data-state": s.sync.state, title: sync.title, role: "button", tabindex: "0", onclick: () => openSettingsAt("sync"), onkeydown: (e: KeyboardEvent) => e.key === "Enter" && openSettingsAt("sync") }, h("span", { class: "sync-dot", "aria-hidden": "true" }), sync.text),
      );
    }
    el.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
  };
  render();
  subscribe("status", render);
  return el;
}
