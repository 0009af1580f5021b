/**
 * Settings → Sync (`#sync-panel`). Not paired: server, pairing code and an
 * optional device name → Join. Paired: the account and this device's name;
 * "Add a device" (a one-time code, its expiry and a QR of server + code);
 * the device list with Revoke (confirmed in place); Leave (confirmed, and
 * "Leave anyway" when the server cannot be told). Every failure is shown in
 * plain words with what to do (`syncErrorText`); requests are bounded by
 * the backend, and nothing else in the app waits for them.
 */
import { api, type ApiError, type DeviceView, type ErrorKind, type SyncAccount } from "../ipc";
import { explain } from "../lib/errors";
import { locale, t, type Key } from "../i18n";
import { field, h, toast } from "./dom";

/** The error kinds of sync requests, each worded in `sync.err.<kind>`. */
export const SYNC_KINDS: readonly ErrorKind[] = [
  "sync_bad_url", "sync_unreachable", "sync_timeout", "sync_tls", "sync_not_kairos", "sync_version",
  "sync_code_wrong", "sync_code_used", "sync_code_expired", "sync_revoked", "sync_not_paired",
  "sync_already_paired", "sync_server",
];

/** A failure of a sync request, in the UI's language, saying what to do. */
export function syncErrorText(e: ApiError): string {
  if (SYNC_KINDS.includes(e.kind)) return t(`sync.err.${e.kind}` as Key, { message: e.message });
  return explain(e).text;
}

function when(instant: string): string {
  const d = new Date(instant);
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay
    ? d.toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleString(locale(), { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** The panel; it loads the account itself and redraws after each change. */
export function syncPanel(): HTMLElement {
  const root = h("div", { id: "sync-panel", class: "sync-panel", "data-state": "loading" }, h("p", { class: "hint" }, t("sync.loading")));
  const show = (acc: SyncAccount): void => {
    root.dataset.state = acc.paired ? "paired" : "unpaired";
    root.replaceChildren(...(acc.paired ? pairedView(acc, show) : joinView(show)));
  };
  api.sync_account().then(show, (e: ApiError) => {
    root.dataset.state = "error";
    root.replaceChildren(errorLine(syncErrorText(e)));
  });
  return root;
}

function errorLine(text = ""): HTMLParagraphElement {
  return h("p", { id: "sync-error", role: "alert", class: "form-error", hidden: !text }, text);
}

function fail(line: HTMLElement, e: unknown): void {
  const err = e as ApiError;
  line.textContent = syncErrorText(err);
  line.title = err.message;
  line.hidden = false;
}

function joinView(show: (acc: SyncAccount) => void): HTMLElement[] {
  const server = h("input", { id: "sync-server", type: "text", placeholder: "ws://192.168.1.10:8443", autocomplete: "off", spellcheck: "false" });
  const code = h("input", { id: "sync-code", type: "text", placeholder: "ABCD-EFGH-JKLM", autocomplete: "off", spellcheck: "false" });
  const name = h("input", { id: "sync-name", type: "text", placeholder: t("sync.namePlaceholder"), autocomplete: "off" });
  const error = errorLine();
  const join = h("button", { type: "button", id: "sync-join", class: "primary" }, t("sync.join"));
  join.addEventListener("click", () => {
    error.hidden = true;
    join.disabled = true;
    join.textContent = t("sync.joining");
    api
      .sync_join({ server: server.value, code: code.value, device_name: name.value })
      .then((acc) => {
        toast(t("sync.joined", { account: acc.account ?? "" }));
        show(acc);
      })
      .catch((e: unknown) => {
        fail(error, e);
        join.disabled = false;
        join.textContent = t("sync.join");
      });
  });
  return [
    h("p", { class: "hint" }, t("sync.intro")),
    h("div", { class: "row" }, field(t("sync.server"), server), field(t("sync.code"), code)),
    h("p", { class: "hint" }, t("sync.codeHint")),
    h("div", { class: "row" }, field(t("sync.name"), name), h("div", { class: "sync-join-cell" }, join)),
    error,
  ];
}

function pairedView(acc: SyncAccount, show: (acc: SyncAccount) => void): HTMLElement[] {
  const error = errorLine();
  const codeBox = h("div", { id: "sync-code-box", class: "sync-code-box", hidden: true });
  const add = h("button", { type: "button", id: "sync-add" }, t("sync.add"));
  add.addEventListener("click", () => {
    error.hidden = true;
    add.disabled = true;
    api
      .sync_pair()
      .then((c) => {
        const qr = h("div", { class: "sync-qr", title: c.link, "aria-label": c.link });
        // The SVG is made by the backend's QR crate from server + code.
        qr.innerHTML = c.qr_svg;
        codeBox.replaceChildren(
          qr,
          h(
            "div",
            { class: "sync-code-text" },
            h("p", { class: "hint" }, t("sync.codeFor")),
            h("p", { id: "sync-new-code", class: "sync-big-code" }, c.code),
            h("p", { class: "hint" }, t("sync.server") + ": ", h("code", null, acc.server ?? "")),
            h("p", { id: "sync-expires", class: "hint" }, t("sync.expires", { time: when(c.expires_at) })),
          ),
        );
        codeBox.hidden = false;
      })
      .catch((e: unknown) => fail(error, e))
      .finally(() => (add.disabled = false));
  });
  const list = h("ul", { id: "sync-devices", class: "sync-devices" }, h("li", { class: "hint" }, t("sync.loading")));
  const name = h("span", { id: "sync-device-name" }, acc.device_name ?? acc.device ?? "");
  const loadDevices = (): void => {
    api
      .sync_devices()
      .then((devices) => {
        const me = devices.find((d) => d.this_device);
        if (me && !acc.device_name) name.textContent = me.name;
        list.replaceChildren(...devices.map((d) => deviceRow(d, error, loadDevices)));
      })
      .catch((e: unknown) => {
        list.replaceChildren();
        fail(error, e);
      });
  };
  loadDevices();
  const leaveBox = h("div", { id: "sync-leave-box", class: "sync-confirm", hidden: true });
  const leave = h("button", { type: "button", id: "sync-leave", class: "danger" }, t("sync.leave"));
  const doLeave = (force: boolean): void => {
    error.hidden = true;
    api
      .sync_leave(force)
      .then((after) => {
        toast(t("sync.left"));
        show(after);
      })
      .catch((e: unknown) => {
        fail(error, e);
        const kind = (e as ApiError).kind;
        if (!force && (kind === "sync_unreachable" || kind === "sync_timeout" || kind === "sync_server" || kind === "sync_tls")) {
          const anyway = h("button", { type: "button", id: "sync-leave-force", class: "danger small" }, t("sync.leaveForce"));
          anyway.addEventListener("click", () => doLeave(true));
          leaveBox.replaceChildren(h("p", { class: "hint" }, t("sync.leaveForceHint")), anyway);
          leaveBox.hidden = false;
        }
      });
  };
  leave.addEventListener("click", () => {
    const yes = h("button", { type: "button", id: "sync-leave-confirm", class: "danger small" }, t("sync.leaveConfirm"));
    const no = h("button", { type: "button", class: "ghost small" }, t("common.cancel"));
    yes.addEventListener("click", () => {
      leaveBox.hidden = true;
      doLeave(false);
    });
    no.addEventListener("click", () => (leaveBox.hidden = true));
    leaveBox.replaceChildren(h("p", null, t("sync.leaveAsk")), h("div", { class: "sync-confirm-actions" }, yes, no));
    leaveBox.hidden = false;
  });
  return [
    h(
      "dl",
      { id: "sync-account", class: "sync-account" },
      h("dt", null, t("sync.account")),
      h("dd", { id: "sync-account-id" }, acc.account ?? ""),
      h("dt", null, t("sync.server")),
      h("dd", null, h("code", null, acc.server ?? "")),
      h("dt", null, t("sync.thisDevice")),
      h("dd", null, name),
    ),
    h("div", { class: "row sync-actions" }, add, h("span", { class: "spacer" }), leave),
    leaveBox,
    codeBox,
    h("h3", { class: "sync-heading" }, t("sync.devices")),
    list,
    error,
  ];
}

function deviceRow(d: DeviceView, error: HTMLElement, reload: () => void): HTMLLIElement {
  const seen = d.connected ? t("sync.online") : d.last_seen ? t("sync.lastSeen", { when: when(d.last_seen) }) : t("sync.never");
  const row = h(
    "li",
    { class: `device-row${d.revoked ? " revoked" : ""}`, "data-device": d.device, "data-this": d.this_device ? "1" : null },
    h(
      "div",
      { class: "device-main" },
      h("span", { class: "device-name" }, d.name),
      d.this_device ? h("span", { class: "badge device-this" }, t("sync.thisDevice")) : null,
      d.revoked ? h("span", { class: "badge device-revoked" }, t("sync.revoked")) : null,
      h("span", { class: "hint device-seen" }, seen),
    ),
  );
  if (!d.this_device && !d.revoked) {
    const revoke = h("button", { type: "button", class: "danger small device-revoke" }, t("sync.revoke"));
    revoke.addEventListener("click", () => {
      const yes = h("button", { type: "button", class: "danger small device-revoke-confirm" }, t("sync.revoke"));
      const no = h("button", { type: "button", class: "ghost small" }, t("common.cancel"));
      const ask = h("div", { class: "sync-confirm device-ask" }, h("p", null, t("sync.revokeAsk", { name: d.name })), h("div", { class: "sync-confirm-actions" }, yes, no));
      no.addEventListener("click", () => {
        ask.remove();
        revoke.hidden = false;
      });
      yes.addEventListener("click", () => {
        yes.disabled = true;
        api
          .sync_revoke(d.device)
          .then(() => {
            toast(t("sync.revokedToast", { name: d.name }));
            reload();
          })
          .catch((e: unknown) => {
            ask.remove();
            revoke.hidden = false;
            fail(error, e);
          });
      });
      revoke.hidden = true;
      row.append(ask);
    });
    row.append(revoke);
  }
  return row;
}
