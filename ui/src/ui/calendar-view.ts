/**
 * The month / week / day / agenda views: FullCalendar in `timeZone: 'UTC'`
 * fed the backend's wall times as they are, so FullCalendar never converts
 * zones (the backend owns all zone math). Dragging or resizing calls
 * `move_event` with wall-clock minute deltas. The month grid asks for only
 * a few occurrences a day; its "+N more" adds what the backend left out.
 */
import { Calendar, type DayHeaderContentArg, type EventDropArg, type EventInput, type EventSourceFuncArg } from "@fullcalendar/core";
import zhCnLocale from "@fullcalendar/core/locales/zh-cn";
import dayGridPlugin from "@fullcalendar/daygrid";
import interactionPlugin, { type EventResizeDoneArg } from "@fullcalendar/interaction";
import listPlugin from "@fullcalendar/list";
import timeGridPlugin from "@fullcalendar/timegrid";
import { api, type OccurrenceView } from "../ipc";
import { minutesBetween, nowWall, toDateStr, toMinuteStr, toWallStr } from "../lib/dates";
import { isNoop, moveDeltas } from "../lib/drag";
import { explain } from "../lib/errors";
import { monthPerDay, monthPerDayIn, moreByDate } from "../lib/more";
import { lang, locale, t } from "../i18n";
import { eventsChanged, loadStatus, state, subscriptionOf } from "../state";
import { toast } from "./dom";
import { editEvent, newEvent } from "./editor";
import { moreCount, refreshMoreCounts } from "./more-link";
import { askScope } from "./scope";

export const VIEWS = ["month", "week", "day", "agenda"] as const;
export type ViewName = (typeof VIEWS)[number];

const FC_VIEW: Record<ViewName, string> = {
  month: "dayGridMonth",
  week: "timeGridWeek",
  day: "timeGridDay",
  agenda: "agenda",
};

const viewNameOf = (fcType: string): ViewName =>
  (Object.entries(FC_VIEW).find(([, v]) => v === fcType)?.[0] as ViewName | undefined) ?? "month";

/** Black or white text, whichever reads better on `bg` (`#rrggbb`). */
export function textOn(bg: string): string {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(bg);
  if (!m) return "#fff";
  const [r, g, b] = m.slice(1).map((x) => parseInt(x, 16) / 255) as [number, number, number];
  const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return lum > 0.6 ? "#1d1d1f" : "#fff";
}

/** An occurrence as a FullCalendar event. */
export function toFcEvent(o: OccurrenceView): EventInput {
  return {
    id: `${o.event.calendar_id}/${o.event.uid}/${o.event.recurrence_id ?? ""}`,
    title: o.title,
    start: o.start,
    end: o.end,
    allDay: o.all_day,
    backgroundColor: o.color,
    borderColor: o.color,
    textColor: textOn(o.color),
    // A task has a due time, not a length: it moves but does not resize.
    durationEditable: o.task === null,
    // A subscribed calendar's events are the feed's: they do not move.
    ...(subscriptionOf(o.event.calendar_id) ? { editable: false } : {}),
    classNames: o.task ? ["is-task", ...(o.task.done ? ["is-done"] : [])] : [],
    extendedProps: { occ: o },
  };
}

export interface ViewChange {
  title: string;
  view: ViewName;
}

export class CalendarView {
  readonly fc: Calendar;
  private readonly el: HTMLElement;
  /**
   * The FullCalendar view the next fetch is for. Set before each change of
   * view: FullCalendar fetches while it switches, before `fc.view` changes.
   */
  private fcType: string;
  /** Occurrences the backend left out, by date (the last month fetched). */
  private serverMore = new Map<string, number>();
  /** `per_day` of the last request (`null`: not capped). */
  private asked: number | null = null;
  private fetches = 0;

  constructor(
    el: HTMLElement,
    onChange: (c: ViewChange) => void,
    onLoaded: () => void,
    initial?: { view: ViewName; date: Date },
  ) {
    this.el = el;
    this.fcType = FC_VIEW[initial?.view ?? "month"];
    // English: "9:30 AM"; Chinese: "09:30" (FullCalendar's zh-cn default writes "18时").
    const timeFmt =
      lang() === "en"
        ? ({ hour: "numeric", minute: "2-digit", meridiem: "short" } as const)
        : ({ hour: "2-digit", minute: "2-digit", hour12: false } as const);
    this.fc = new Calendar(el, {
      plugins: [dayGridPlugin, timeGridPlugin, listPlugin, interactionPlugin],
      timeZone: "UTC",
      now: () => nowWall(state.status.time_zone),
      initialView: this.fcType,
      ...(initial ? { initialDate: initial.date } : {}),
      locales: [zhCnLocale],
      locale: lang() === "zh-CN" ? "zh-cn" : "en",
      firstDay: state.settings.week_start,
      headerToolbar: false,
      height: "100%",
      nowIndicator: true,
      scrollTime: "07:30:00",
      eventMinHeight: 22,
      views: {
        agenda: { type: "list", duration: { days: 30 }, listDayFormat: { weekday: "long", month: "long", day: "numeric" } },
        // "Mon 30" over the hours; short events show the start only.
        timeGrid: {
          displayEventEnd: false,
          dayHeaderContent: (arg: DayHeaderContentArg) =>
            `${arg.date.toLocaleDateString(locale(), { weekday: "short", timeZone: "UTC" })} ${arg.date.getUTCDate()}`,
        },
      },
      dayMaxEvents: true,
      // A capped month's events must not be reused by the week or day view
      // of the same dates: every view asks for its own range.
      lazyFetching: false,
      moreLinkContent: (arg) => ({ domNodes: [moreCount(arg.num, () => this.serverMore)] }),
      // The backend left some of this day out, so a popover could list only
      // what arrived: open the day view (which asks for all) instead.
      moreLinkClick: (arg) => {
        if (!this.serverMore.get(toDateStr(arg.date))) return "popover";
        this.fcType = FC_VIEW.day;
        return FC_VIEW.day;
      },
      windowResize: () => this.topUp(),
      editable: true,
      selectable: true,
      selectMirror: true,
      eventTimeFormat: timeFmt,
      noEventsText: t("rem.empty"),
      events: (info: EventSourceFuncArg) => this.load(info),
      eventDidMount: (arg) => {
        const o = arg.event.extendedProps.occ as OccurrenceView | undefined;
        if (!o) return;
        arg.el.dataset.uid = o.event.uid;
        if (o.event.recurrence_id) arg.el.dataset.recurrenceId = o.event.recurrence_id;
        arg.el.title = [o.title, o.location].filter(Boolean).join(" · ");
        arg.el.classList.toggle("is-recurring", o.recurring);
        arg.el.classList.toggle("has-alarms", o.has_alarms);
        // List and month "dot" events take the calendar colour on the dot only.
        arg.el.style.setProperty("--ev-color", o.color);
      },
      eventClick: (arg) => {
        arg.jsEvent.preventDefault();
        const o = arg.event.extendedProps.occ as OccurrenceView | undefined;
        if (o) void editEvent(o.event);
      },
      select: (arg) => {
        this.fc.unselect();
        if (arg.allDay) {
          const days = minutesBetween(arg.start, arg.end) / 1440;
          // One day clicked in the month: a timed event at 09:00 that day.
          if (days <= 1 && arg.view.type === "dayGridMonth") void newEvent(`${toDateStr(arg.start)}T09:00`);
          else void newEvent(toDateStr(arg.start), toDateStr(arg.end));
        } else {
          const one = minutesBetween(arg.start, arg.end) <= 30;
          void newEvent(toMinuteStr(arg.start), one ? undefined : toMinuteStr(arg.end));
        }
      },
      eventDrop: (arg) => void this.moved(arg),
      eventResize: (arg) => void this.moved(arg),
      loading: (busy) => {
        el.dataset.loading = busy ? "1" : "0";
        if (busy) return;
        onLoaded();
        this.topUp();
      },
      datesSet: (arg) => {
        this.fcType = arg.view.type;
        onChange({ title: arg.view.title, view: viewNameOf(arg.view.type) });
      },
    });
    this.fc.render();
  }

  /** The event source: the month grid capped per day, other views whole. */
  private async load(info: EventSourceFuncArg): Promise<EventInput[]> {
    const fetch = ++this.fetches;
    const perDay = this.fcType === FC_VIEW.month ? this.monthPerDay() : null;
    // What was asked, answered or not: `topUp` must not retry a failing call.
    this.asked = perDay;
    try {
      const r = await api.occurrences({ from: toWallStr(info.start), to: toWallStr(info.end), per_day: perDay });
      // FullCalendar drops the events of a fetch overtaken by a newer one;
      // its counts go too.
      if (fetch === this.fetches) {
        this.serverMore = moreByDate(r.more);
        refreshMoreCounts(this.el);
      }
      return r.items.filter((o) => state.calendars.find((c) => c.id === o.event.calendar_id)?.visible !== false).map(toFcEvent);
    } catch (e) {
      toast(explain(e as never).text, "error");
      return [];
    }
  }

  /** One more occurrence a day than a month cell shows: measured once the cells are drawn, estimated before. */
  private monthPerDay(): number {
    return monthPerDayIn(this.el) ?? monthPerDay(this.el.clientHeight);
  }

  /** Asks again when the month's cells hold more than the last answer fills (a bigger window, or the first estimate fell short). */
  private topUp(): void {
    if (this.fcType !== FC_VIEW.month || this.asked === null) return;
    if (this.monthPerDay() > this.asked) this.fc.refetchEvents();
  }

  private async moved(arg: EventDropArg | EventResizeDoneArg): Promise<void> {
    const o = arg.event.extendedProps.occ as OccurrenceView | undefined;
    // Dragging between the all-day row and the hours would change the kind
    // of event, which `move_event` does not do.
    if (!o || arg.event.allDay !== arg.oldEvent.allDay || !arg.event.start || !arg.oldEvent.start) {
      arg.revert();
      return;
    }
    const deltas = moveDeltas({ start: arg.oldEvent.start, end: arg.oldEvent.end }, { start: arg.event.start, end: arg.event.end });
    if (isNoop(deltas)) return;
    const scope = o.recurring ? await askScope("move") : "all";
    if (scope === null) {
      arg.revert();
      return;
    }
    try {
      await api.move_event({ event: o.event, scope, ...deltas });
      eventsChanged();
      void loadStatus().catch(() => undefined);
    } catch (e) {
      arg.revert();
      toast(explain(e as never).text, "error");
    }
  }

  get view(): ViewName {
    return viewNameOf(this.fc.view.type);
  }

  setView(v: ViewName): void {
    this.fcType = FC_VIEW[v];
    this.fc.changeView(FC_VIEW[v]);
  }

  refetch(): void {
    this.fc.refetchEvents();
  }

  destroy(): void {
    this.fc.destroy();
  }
}
