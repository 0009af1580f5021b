/**
 * The fake's CalDAV accounts, for the browser tests and screenshots (the
 * real ones are kairos-app's `CaldavAccounts`). The server address says
 * how the "server" answers: host `down.example` no server, `slow.example`
 * a timeout, `self-signed.example` an untrusted certificate, a path
 * starting `/blog` not CalDAV, no `://` and no `@` not an address;
 * anything else is a server with "Work" (events and tasks, blue),
 * "Family" (events, green) and "Chores" (tasks) whose password is
 * `app-password`. `self-signed.example` is trusted when the login carries
 * a CA certificate (PEM). An added account has not synced:
 * `finishFirstSync` plays the host's background sync. "Refresh list"
 * finds "Trips" (events), made on the server since.
 */
import type { ApiError, CaldavAccountView, CaldavAddRequest, CaldavDiscovery, CaldavEditRequest, CaldavLogin, CalendarInfo, ErrorKind } from "../ipc/bindings";

export const FAKE_PASSWORD = "app-password";

const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");
const fail = (kind: ErrorKind, message: string): ApiError => ({ kind, message });

const CALENDARS: CaldavDiscovery["calendars"] = [
  { name: "Work", color: "#3a86ffff", events: true, tasks: true },
  { name: "Family", color: "#2a9d8fff", events: true, tasks: false },
  { name: "Chores", color: "#e76f51ff", events: false, tasks: true },
];

export function discover(r: CaldavLogin): CaldavDiscovery {
  const url = r.url.trim();
  if (!url || !r.user.trim() || !r.password) {
    const which = !url ? "url" : !r.user.trim() ? "user" : "password";
    throw fail("invalid", `${which}: required`);
  }
  if (!url.includes("://") && !url.includes("@") && !url.includes(".")) throw fail("caldav_bad_url", `bad URL "${url}": use an http:// or https:// URL with a host`);
  const host = /^(?:https?:\/\/)?(?:[^@/]*@)?([^/:]+)/i.exec(url)?.[1] ?? url;
  const path = /^https?:\/\/[^/]+(\/\S*)?$/i.exec(url)?.[1] ?? "/";
  if (host === "down.example") throw fail("caldav_unreachable", `cannot reach https://${host}/: tcp connect error: Connection refused (os error 111)`);
  if (host === "slow.example") throw fail("caldav_timeout", `cannot reach https://${host}/: PROPFIND current-user-principal timed out after 60 s`);
  if (r.ca_pem !== undefined && !r.ca_pem.includes("-----BEGIN CERTIFICATE-----")) throw fail("invalid", 'ca_pem: CA certificate: no "-----BEGIN CERTIFICATE-----" block in it (give the CA\'s certificate in PEM form)');
  if (host === "self-signed.example" && !r.ca_pem) throw fail("caldav_tls", `cannot reach https://${host}/: invalid peer certificate: UnknownIssuer`);
  if (path.startsWith("/blog")) throw fail("caldav_not_caldav", `${url} is not a CalDAV server: OPTIONS ${url}: no calendar-access, and https://${host}:443/.well-known/caldav does not redirect to a CalDAV service`);
  if (r.password !== FAKE_PASSWORD) throw fail("caldav_unauthorized", `the server at https://${host}/ refused user "${r.user}" (401 Unauthorized): check the user name and the password (an app password if the account uses two-step sign-in)`);
  return { home: `https://${host}/dav/calendars/${r.user}/`, calendars: CALENDARS.map((c) => ({ ...c })) };
}

export class FakeCaldav {
  accounts: CaldavAccountView[] = [];
  private next = 1;

  add(r: CaldavAddRequest, cals: Omit<CalendarInfo, "events">[], newId: () => number): CaldavAccountView {
    const found = discover(r);
    if (r.calendars.length === 0) throw fail("invalid", "calendars: choose at least one");
    if (this.accounts.some((a) => a.url === r.url.trim() && a.user === r.user.trim())) throw fail("invalid", `url: ${r.user} at ${r.url} is added already (remove it first to add it again)`);
    const account: CaldavAccountView = {
      id: this.next++,
      url: r.url.trim(),
      user: r.user.trim(),
      calendars: found.calendars.map((c) => {
        if (!r.calendars.includes(c.name)) return { name: c.name, color: c.color, calendar_id: null, synced_at: null };
        const id = newId();
        cals.push({ id, name: c.name, color: (c.color ?? "#3a86ff").slice(0, 7), visible: true, default_alarms: [], work_week: 31, holidays: false });
        return { name: c.name, color: c.color, calendar_id: id, synced_at: null };
      }),
      synced_at: null,
      last_error: null,
      error_at: null,
      next_sync: null,
      every_seconds: 300,
      private_ca: Boolean(r.ca_pem),
    };
    this.accounts.push(account);
    return structuredClone(account);
  }

  /** The host's background sync of account `id` ended (with `error`, or well). */
  finishFirstSync(id: number, error: ApiError | null = null, now = new Date()): void {
    const a = this.get(id);
    if (error) {
      a.last_error = { kind: error.kind, message: error.message };
      a.error_at = iso(now);
    } else {
      a.synced_at = iso(now);
      a.last_error = a.error_at = null;
      for (const c of a.calendars) if (c.calendar_id !== null) c.synced_at = a.synced_at;
    }
    a.next_sync = iso(new Date(now.getTime() + 5 * 60_000));
  }

  sync(id: number): CaldavAccountView {
    const a = this.get(id);
    const host = /^(?:https?:\/\/)?([^/:]+)/i.exec(a.url)?.[1] ?? "";
    this.finishFirstSync(id, host === "down.example" ? fail("caldav_unreachable", `cannot reach ${a.url}: Connection refused`) : null);
    return structuredClone(a);
  }

  get(id: number): CaldavAccountView {
    const a = this.accounts.find((x) => x.id === id);
    if (!a) throw fail("not_found", `no CalDAV account ${id}`);
    return a;
  }

  /** "Refresh list": the server now also has "Trips". */
  refresh(id: number): CaldavAccountView {
    const a = this.get(id);
    if (!a.calendars.some((c) => c.name === "Trips")) a.calendars.push({ name: "Trips", color: "#f4a261ff", calendar_id: null, synced_at: null });
    a.calendars.sort((x, y) => x.name.localeCompare(y.name));
    return structuredClone(a);
  }

  edit(r: CaldavEditRequest, cals: Omit<CalendarInfo, "events">[], newId: () => number): CaldavAccountView {
    const a = this.get(r.id);
    const login = r.password !== null || r.ca_pem !== undefined || r.no_ca === true;
    if (r.every_seconds === null && !r.choose.length && !r.unchoose.length && !login) throw fail("invalid", "nothing to change");
    if (r.ca_pem !== undefined && r.no_ca) throw fail("invalid", "ca_pem: give a CA certificate or drop it (no_ca), not both");
    if (r.ca_pem !== undefined && !r.ca_pem.includes("-----BEGIN CERTIFICATE-----")) throw fail("invalid", 'ca_pem: CA certificate: no "-----BEGIN CERTIFICATE-----" block in it (give the CA\'s certificate in PEM form)');
    // The fake's self-hosted server needs a certificate of its own.
    if (r.no_ca && a.url.includes("self-signed.example")) throw fail("caldav_tls", `the server at ${a.url} sent a TLS certificate Kairos does not trust: it is a self-signed certificate this computer does not know`);
    for (const n of [...r.choose, ...r.unchoose]) if (!a.calendars.some((c) => c.name === n)) throw fail("not_found", `calendars: no calendar called "${n}" in this account`);
    if (r.password !== null && r.password !== FAKE_PASSWORD) throw fail("caldav_unauthorized", `the server at ${a.url} refused user "${a.user}" (401 Unauthorized): check the user name and the password (an app password if the account uses two-step sign-in)`);
    if (r.every_seconds !== null) a.every_seconds = r.every_seconds;
    if (r.ca_pem !== undefined) a.private_ca = true;
    if (r.no_ca) a.private_ca = false;
    for (const c of a.calendars) {
      if (r.choose.includes(c.name) && c.calendar_id === null) {
        const same = cals.find((k) => k.name === c.name);
        c.calendar_id = same?.id ?? newId();
        if (!same) cals.push({ id: c.calendar_id, name: c.name, color: (c.color ?? "#3a86ff").slice(0, 7), visible: true, default_alarms: [], work_week: 31, holidays: false });
      }
      if (r.unchoose.includes(c.name)) c.calendar_id = null;
    }
    return structuredClone(a);
  }

  remove(id: number): void {
    this.get(id);
    this.accounts = this.accounts.filter((x) => x.id !== id);
  }
}
