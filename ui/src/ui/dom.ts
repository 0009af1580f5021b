/** A small `h()` for building DOM, dialogs, and toasts. */

type Child = Node | string | number | null | undefined | false;
type Props = Record<string, unknown>;

/**
 * Creates an element. Props: `class`, `on<event>` listeners, `value`/`checked`
 * /`selected`/`disabled`/`hidden` as properties, other keys as attributes
 * (`true` = present, `false`/`null`/`undefined` = absent).
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined || v === null || v === false) {
      if (k === "hidden" || k === "disabled" || k === "checked" || k === "selected") (el as never as Record<string, boolean>)[k] = false;
      continue;
    }
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2).toLowerCase(), v as EventListener);
    } else if (k === "class") {
      el.className = String(v);
    } else if (["value", "checked", "selected", "disabled", "hidden"].includes(k)) {
      (el as never as Record<string, unknown>)[k] = v;
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
  return el;
}

/** A `<label>` around a caption and a control. */
export function field(caption: string, control: HTMLElement, extra?: HTMLElement | null, cls = ""): HTMLLabelElement {
  return h("label", { class: `field ${cls}`.trim() }, h("span", { class: "field-caption" }, caption), control, extra);
}

/** An `<option>`. */
export function option(value: string, text: string, selected = false): HTMLOptionElement {
  return h("option", { value, selected }, text);
}

/**
 * Shows `dlg` modally (attached to the body until closed). Escape closes it
 * (the browser's `cancel`), calling `onClose`.
 */
export function showDialog(dlg: HTMLDialogElement, onClose?: () => void): void {
  document.body.append(dlg);
  dlg.addEventListener("close", () => {
    dlg.remove();
    onClose?.();
  });
  dlg.showModal();
}

/** Whether any modal dialog is open. */
export function dialogOpen(): boolean {
  return document.querySelector("dialog[open]") !== null;
}

/** Header of a dialog: a title and a close button. */
export function dialogHeader(title: string, close: () => void): HTMLElement {
  return h(
    "header",
    { class: "dialog-header" },
    h("h2", null, title),
    h("button", { type: "button", class: "icon-btn", "aria-label": "×", onclick: close }, "×"),
  );
}

let toastBox: HTMLElement | null = null;

/** A short message at the bottom of the window. */
export function toast(message: string, kind: "info" | "error" = "info"): void {
  if (!toastBox || !toastBox.isConnected) {
    toastBox = h("div", { id: "toasts", role: "status", "aria-live": "polite" });
    document.body.append(toastBox);
  }
  const el = h("div", { class: `toast toast-${kind}` }, message);
  toastBox.append(el);
  setTimeout(() => el.remove(), kind === "error" ? 8000 : 3500);
}
