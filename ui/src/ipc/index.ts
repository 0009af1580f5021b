/**
 * The one module that talks to Tauri. Everything else imports `api`,
 * `onEvent` and the file pickers from here, so the UI can be tested with
 * the IPC mocked (`@tauri-apps/api/mocks`) and nothing else knows Tauri.
 */
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { open, save } from "@tauri-apps/plugin-dialog";
import { EVENTS, makeCommands, type ApiError, type ErrorKind, type Invoke } from "./bindings";

export * from "./bindings";

const KINDS: readonly ErrorKind[] = [
  "invalid", "not_found", "store", "io", "internal",
  "sync_bad_url", "sync_unreachable", "sync_timeout", "sync_tls", "sync_not_kairos", "sync_version",
  "sync_code_wrong", "sync_code_used", "sync_code_expired", "sync_revoked", "sync_not_paired",
  "sync_already_paired", "sync_server",
  "feed_url", "feed_unreachable", "feed_timeout", "feed_http", "feed_too_large", "feed_not_calendar", "feed_calendar_in_use",
  "caldav_unauthorized", "caldav_not_caldav", "caldav_unreachable", "caldav_tls", "caldav_timeout", "caldav_bad_url",
  "caldav_secret", "caldav_server",
];

/** Whatever a command rejected with, as an `ApiError`. */
export function toApiError(e: unknown): ApiError {
  if (e && typeof e === "object" && "message" in e) {
    const o = e as { kind?: unknown; message: unknown };
    const kind = KINDS.includes(o.kind as ErrorKind) ? (o.kind as ErrorKind) : "internal";
    return { kind, message: String(o.message) };
  }
  return { kind: "internal", message: typeof e === "string" ? e : String(e) };
}

export function isApiError(e: unknown): e is ApiError {
  return !!e && typeof e === "object" && "kind" in e && "message" in e;
}

const normalised: Invoke = async <T>(cmd: string, args?: Record<string, unknown>): Promise<T> => {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw toApiError(e);
  }
};

/** One typed function per command; rejections are `ApiError`s. */
export const api = makeCommands(normalised);
export type Api = typeof api;

export type EventName = (typeof EVENTS)[keyof typeof EVENTS];

/** Listens to an event the shell emits; resolves to the unlisten function. */
export async function onEvent<T = unknown>(name: EventName, cb: (payload: T) => void): Promise<() => void> {
  return listen<T>(name, (e) => cb(e.payload));
}

const ICS_FILTER = [{ name: "iCalendar", extensions: ["ics", "ical", "ifb", "icalendar"] }];

/** The open-file dialog for an `.ics` file; `null` when cancelled. */
export async function pickIcsToOpen(): Promise<string | null> {
  const path = await open({ multiple: false, directory: false, filters: ICS_FILTER });
  return typeof path === "string" ? path : null;
}

/** The save-file dialog for an `.ics` file; `null` when cancelled. */
export async function pickIcsToSave(defaultName: string): Promise<string | null> {
  return save({ defaultPath: defaultName, filters: ICS_FILTER });
}
