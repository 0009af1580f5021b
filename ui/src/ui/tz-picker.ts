/**
 * A searchable time-zone field: a text input (the value is the IANA name)
 * with a list of matches from `time_zones` under it.
 */
import { h } from "./dom";
import { t } from "../i18n";
import { timeZones } from "../state";

const MAX_SHOWN = 80;

/** The zones matching `query` (every word, anywhere, `_` as space). */
export function matchZones(zones: readonly string[], query: string, max = MAX_SHOWN): string[] {
  const words = query.toLowerCase().replace(/_/g, " ").split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (const z of zones) {
    const hay = z.toLowerCase().replace(/_/g, " ");
    if (words.every((w) => hay.includes(w))) out.push(z);
    if (out.length >= max) break;
  }
  return out;
}

export interface TzPicker {
  el: HTMLElement;
  input: HTMLInputElement;
}

export function tzPicker(id: string, value: string, placeholder = t("tz.search")): TzPicker {
  const input = h("input", { id, type: "text", value, placeholder, autocomplete: "off", spellcheck: "false", role: "combobox", "aria-expanded": "false" });
  const list = h("ul", { class: "tz-list", role: "listbox", hidden: true });
  const el = h("div", { class: "tz-picker" }, input, list);
  let all: string[] = [];
  let active = -1;

  const items = (): HTMLLIElement[] => [...list.querySelectorAll<HTMLLIElement>("li[data-zone]")];
  const close = (): void => {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
  };
  const pick = (zone: string): void => {
    input.value = zone;
    close();
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const mark = (i: number): void => {
    const li = items();
    active = Math.max(0, Math.min(i, li.length - 1));
    li.forEach((x, j) => x.classList.toggle("active", j === active));
    li[active]?.scrollIntoView({ block: "nearest" });
  };
  const render = (): void => {
    // Show everything on focus when the value is a full zone name.
    const q = all.includes(input.value) ? "" : input.value;
    const found = matchZones(all, q);
    list.replaceChildren(
      ...(found.length
        ? found.map((z) =>
            h("li", { "data-zone": z, role: "option", onmousedown: (e: Event) => (e.preventDefault(), pick(z)) }, z.replace(/_/g, " ")),
          )
        : [h("li", { class: "muted" }, t("tz.none"))]),
    );
    active = -1;
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
  };

  input.addEventListener("focus", () => {
    void timeZones().then((z) => {
      all = z;
      if (document.activeElement === input) render();
    });
  });
  input.addEventListener("input", render);
  input.addEventListener("blur", close);
  input.addEventListener("keydown", (e) => {
    if (list.hidden) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      mark(active + (e.key === "ArrowDown" ? 1 : -1));
    } else if (e.key === "Enter") {
      const z = items()[active]?.dataset.zone;
      if (z) {
        e.preventDefault();
        pick(z);
      } else close();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      close();
    }
  });
  return { el, input };
}
