/**
 * What the whole UI shares: settings, status, calendars, shown reminders,
 * loaded from the backend and pushed to whoever listens.
 */
import { api, type AppStatus, type CaldavAccountView, type CalendarInfo, type Settings, type ShownReminder, type SubscriptionView, type SyncStatus } from "./ipc";

export interface State {
  settings: Settings;
  status: AppStatus;
  calendars: CalendarInfo[];
  /** Calendars that are ICS feeds (read-only; their status in the sidebar). */
  subscriptions: SubscriptionView[];
  /** CalDAV accounts with their calendars and sync state (the sidebar). */
  caldavAccounts: CaldavAccountView[];
  shown: ShownReminder[];
}

type Topic = "settings" | "status" | "calendars" | "shown" | "events";
const listeners = new Map<Topic, Set<() => void>>();

export const state: State = {
  settings: {
    language: "auto",
    theme: "system",
    time_zone: null,
    week_start: 1,
    snooze_choices: [5, 10, 15, 30, 60],
    default_snooze: 10,
    quiet_hours: null,
    start_at_login: false,
    default_calendar: null,
  },
  status: {
    version: "",
    time_zone: "UTC",
    system_time_zone: "UTC",
    database: "",
    notifier: "actions",
    paused_until: null,
    next: [],
    shown: 0,
    sync: { state: "off", last_sync_at: null, since: null, reason: null, waiting: 0 },
  },
  calendars: [],
  subscriptions: [],
  caldavAccounts: [],
  shown: [],
};

let scope: (() => void)[] | null = null;

/**
 * Calls `cb` whenever `topic` changes. Subscriptions made inside
 * `withScope` end when its disposer is called (the UI is rebuilt when the
 * language changes).
 */
export function subscribe(topic: Topic, cb: () => void): () => void {
  const set = listeners.get(topic) ?? new Set();
  set.add(cb);
  listeners.set(topic, set);
  const off = (): void => void set.delete(cb);
  scope?.push(off);
  return off;
}

/** Runs `build`, returning a function that ends its subscriptions. */
export function withScope(build: () => void): () => void {
  const mine: (() => void)[] = [];
  const outer = scope;
  scope = mine;
  try {
    build();
  } finally {
    scope = outer;
  }
  return () => mine.forEach((off) => off());
}

function publish(topic: Topic): void {
  for (const cb of listeners.get(topic) ?? []) cb();
}

/** Events changed (saved, moved, deleted, imported): views refetch. */
export function eventsChanged(): void {
  publish("events");
}

export function setSettings(s: Settings): void {
  state.settings = s;
  publish("settings");
}

export async function loadStatus(): Promise<void> {
  state.status = await api.app_status();
  publish("status");
}

/** The shell pushed the sync connection's new state. */
export function setSync(s: SyncStatus): void {
  state.status = { ...state.status, sync: s };
  publish("status");
}

/** The calendars, the subscriptions and the CalDAV accounts (the sidebar shows all three). */
export async function loadCalendars(): Promise<void> {
  const [cals, subs, accounts] = await Promise.all([api.list_calendars(), api.list_subscriptions(), api.list_caldav_accounts()]);
  state.calendars = cals;
  state.subscriptions = subs;
  state.caldavAccounts = accounts;
  publish("calendars");
}

/** The subscription of calendar `id`, if it is a feed. */
export function subscriptionOf(id: number): SubscriptionView | undefined {
  return state.subscriptions.find((s) => s.calendar_id === id);
}

export async function loadShown(): Promise<void> {
  state.shown = await api.shown_reminders();
  publish("shown");
}

/** The calendar new events go to: the setting's, else the first visible. */
export function defaultCalendarId(): number | null {
  const cals = state.calendars;
  // A feed's calendar is read-only: new events never go there.
  const own = cals.filter((c) => !subscriptionOf(c.id));
  const pref = own.find((c) => c.id === state.settings.default_calendar);
  return (pref ?? own.find((c) => c.visible) ?? own[0])?.id ?? null;
}

export function calendarById(id: number): CalendarInfo | undefined {
  return state.calendars.find((c) => c.id === id);
}

let zones: Promise<string[]> | null = null;

/** The IANA zones the backend knows (asked once). */
export function timeZones(): Promise<string[]> {
  zones ??= api.time_zones().catch(() => {
    zones = null;
    return [];
  });
  return zones;
}
