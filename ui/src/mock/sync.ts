/**
 * The fake's Settings → Sync: an account, its devices, pairing codes. For
 * the browser tests and screenshots only (the real ones come from the
 * server through kairos-app).
 */
import type { ApiError, DeviceView, JoinRequest, PairingCode, SyncAccount } from "../ipc/bindings";

const iso = (msAgo: number): string => new Date(Date.now() - msAgo).toISOString().replace(/\.\d+Z$/, "Z");

/** A QR-looking SVG (finder squares, a fixed pattern): the real one is the backend's. */
function fakeQr(text: string): string {
  const n = 25;
  const cells: string[] = [];
  let seed = [...text].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7);
  const finder = (x: number, y: number): boolean => {
    for (const [fx, fy] of [[0, 0], [n - 7, 0], [0, n - 7]] as const) {
      const dx = x - fx, dy = y - fy;
      if (dx >= 0 && dx < 7 && dy >= 0 && dy < 7) {
        const ring = Math.min(dx, dy, 6 - dx, 6 - dy);
        return ring !== 1;
      }
    }
    return false;
  };
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const inFinder = (x < 8 && y < 8) || (x >= n - 8 && y < 8) || (x < 8 && y >= n - 8);
      const dark = inFinder ? finder(x, y) : (seed >>> 16) % 2 === 0;
      if (dark) cells.push(`<rect x="${x}" y="${y}" width="1" height="1"/>`);
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="-2 -2 ${n + 4} ${n + 4}"><rect x="-2" y="-2" width="${n + 4}" height="${n + 4}" fill="#fff"/><g fill="#000">${cells.join("")}</g></svg>`;
}

export class FakeSync {
  account: SyncAccount = { paired: true, server: "wss://sync.example.org:8443", account: "alice", device: "d-desk", device_name: "Desk" };
  devices: DeviceView[] = [
    { device: "d-desk", name: "Desk", created_at: iso(40 * 86400_000), last_seen: iso(60_000), connected: true, revoked: false, this_device: true },
    { device: "d-laptop", name: "Laptop", created_at: iso(30 * 86400_000), last_seen: iso(3 * 3600_000), connected: false, revoked: false, this_device: false },
    { device: "d-phone", name: "Phone", created_at: iso(9 * 86400_000), last_seen: null, connected: false, revoked: false, this_device: false },
  ];

  /** Not paired (`?sync=off`). */
  unpair(): void {
    this.account = { paired: false, server: null, account: null, device: null, device_name: null };
  }

  private paired(): void {
    if (!this.account.paired) throw { kind: "sync_not_paired", message: "this database is not paired" } satisfies ApiError;
  }

  handle(cmd: string, args: Record<string, unknown>): unknown {
    switch (cmd) {
      case "sync_account":
        return { ...this.account };
      case "sync_join": {
        const r = args["request"] as JoinRequest;
        if (!r.server.trim()) throw { kind: "invalid", message: "server: enter the sync server's address" } satisfies ApiError;
        if (!r.code.trim()) throw { kind: "invalid", message: "code: enter the pairing code shown on the other device" } satisfies ApiError;
        const name = r.device_name.trim() || "kairos-desktop";
        const server = r.server.includes("://") ? r.server.trim() : `ws://${r.server.trim()}`;
        this.account = { paired: true, server, account: "alice", device: "d-new", device_name: name };
        this.devices = [
          { device: "d-new", name, created_at: iso(0), last_seen: iso(0), connected: true, revoked: false, this_device: true },
          ...this.devices.filter((d) => !d.this_device).map((d) => ({ ...d })),
        ];
        return { ...this.account };
      }
      case "sync_pair": {
        this.paired();
        const code = "K7QM-4XTP-9WRD";
        const link = `kairos://join?server=${encodeURIComponent(this.account.server ?? "")}&code=${code}`;
        return { code, expires_at: new Date(Date.now() + 15 * 60_000).toISOString(), link, qr_svg: fakeQr(link) } satisfies PairingCode;
      }
      case "sync_devices":
        this.paired();
        return this.devices.map((d) => ({ ...d }));
      case "sync_revoke": {
        this.paired();
        const d = this.devices.find((x) => x.device === args["device"]);
        if (!d) throw { kind: "not_found", message: `no device ${String(args["device"])}` } satisfies ApiError;
        d.revoked = true;
        d.connected = false;
        return null;
      }
      case "sync_leave":
        this.paired();
        this.unpair();
        return { ...this.account };
      default:
        throw { kind: "internal", message: `no command ${cmd}` } satisfies ApiError;
    }
  }
}
