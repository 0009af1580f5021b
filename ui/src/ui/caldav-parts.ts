/**
 * Parts the CalDAV dialogs share: the list item of a calendar to tick
 * (add: "Choose calendars"; edit: "Calendars to sync") and the optional CA
 * certificate section (add: a new account's; edit: a new one, or none).
 */
import { t } from "../i18n";
import { h } from "./dom";

/** A calendar's row: its checkbox (class `cls`, value its name), colour
 * swatch and name, then `after` (what it holds, or the "New" mark). */
export function calendarChoice(c: { name: string; color: string | null }, cls: string, checked: boolean, after: HTMLElement | null): HTMLLIElement {
  const box = h("input", { type: "checkbox", class: cls, value: c.name, checked });
  const swatch = h("span", { class: "dav-swatch" });
  swatch.style.background = c.color?.slice(0, 7) ?? "var(--muted)";
  return h("li", null, h("label", { class: "check" }, box, swatch, h("span", { class: "dav-cal-name" }, c.name), after));
}

/** An optional CA certificate: a PEM paste field and a file picker that
 * fills it, under `summary`, with `extra` (the edit dialog's "trust only
 * the public authorities") after it. The add dialog's ids are `dav-ca-*`;
 * the edit dialog passes its own `prefix`. */
export function caSection(ca: HTMLTextAreaElement, hint: string, prefix = "dav-ca", extra: HTMLElement | null = null): HTMLDetailsElement {
  const file = h("input", { type: "file", id: `${prefix}-file`, accept: ".pem,.crt,.cer,text/plain", hidden: true });
  file.addEventListener("change", () => {
    const f = file.files?.[0];
    if (f && f.size <= 64 * 1024) void f.text().then((text) => (ca.value = text));
  });
  const pick = h("button", { type: "button", class: "link", id: `${prefix}-pick`, onclick: () => file.click() }, t("dav.caFile"));
  return h(
    "details",
    { class: "dav-ca", id: `${prefix}-details` },
    h("summary", null, t("dav.ca")),
    h("p", { class: "hint" }, hint),
    ca,
    h("div", { class: "row" }, pick, file),
    extra,
  );
}

