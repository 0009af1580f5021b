/**
 * The text of the month's "+N more" links. FullCalendar gives
 * `moreLinkContent` the number of events it hid but not the day, and the
 * backend may have left out more of that day; the day is on the cell
 * (`td[data-date]`), so the text is finished once the link is in the page.
 */
import { moreTotal } from "../lib/more";
import { t } from "../i18n";

/** The backend's left-out count of a date. */
export type ServerMore = ReadonlyMap<string, number>;

class MoreCount extends HTMLElement {
  /** Events FullCalendar hid in the cell (not `hidden`: HTMLElement has one). */
  cellHidden = 0;
  /** The current counts of the view this link belongs to. */
  server: () => ServerMore = () => new Map();

  connectedCallback(): void {
    this.render();
  }

  /** Writes "+N more" (and the link's hint) for the cell it sits in. */
  render(): void {
    const date = this.closest<HTMLElement>("[data-date]")?.dataset.date;
    const n = moreTotal(this.cellHidden, date, this.server());
    this.textContent = t("view.more", { n });
    this.closest("a")?.setAttribute("title", t("view.moreHint", { n }));
  }
}

const TAG = "kairos-more";
if (!customElements.get(TAG)) customElements.define(TAG, MoreCount);

/** A link text for FullCalendar's `moreLinkContent` (`{ domNodes: [...] }`). */
export function moreCount(cellHidden: number, server: () => ServerMore): HTMLElement {
  const el = document.createElement(TAG) as MoreCount;
  el.cellHidden = cellHidden;
  el.server = server;
  // Right away too, in case FullCalendar inserts it before the cell is in the page.
  el.textContent = t("view.more", { n: cellHidden });
  return el;
}

/** Rewrites every link under `root` (the counts changed). */
export function refreshMoreCounts(root: ParentNode): void {
  root.querySelectorAll<MoreCount>(TAG).forEach((el) => el.render());
}
