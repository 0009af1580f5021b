/**
 * An event's sync history in the editor: its edits that lost to another
 * device's later edit ("Edited on this device, replaced by device d_4f1c…'s
 * later edit"), from what the engine logs when it applies ops.
 */
import type { LostEdit } from "../ipc";
import { formatInstant } from "../lib/dates";
import { locale, t } from "../i18n";
import { state } from "../state";
import { h } from "./dom";

/** "this device", or a device by its id, shortened. */
function device(id: string, here: boolean): string {
  return here ? t("hist.thisDevice") : t("hist.device", { id: id.length > 8 ? `${id.slice(0, 8)}…` : id });
}

/** The history section, or `null` when nothing was lost. */
export function historySection(items: LostEdit[]): HTMLElement | null {
  if (items.length === 0) return null;
  const tz = state.status.time_zone;
  return h(
    "div",
    { class: "field", id: "ev-history" },
    h("span", { class: "field-caption" }, t("hist.title")),
    h(
      "ul",
      { class: "history-list" },
      ...items.map((e) =>
        h(
          "li",
          { title: `${e.lost} → ${e.won}` },
          t("hist.lost", { lost: device(e.lost, e.lost_here), won: device(e.won, e.won_here) }),
          h("span", { class: "muted" }, ` · ${formatInstant(e.at, tz, locale())}`),
        ),
      ),
    ),
  );
}
