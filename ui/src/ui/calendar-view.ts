/**
 * The month / week / day / agenda views: FullCalendar in `timeZone: 'UTC'`
 * fed the backend's wall times as they are, so FullCalendar never converts
 * zones (the backend owns all zone math). Dragging or resizing calls
 * `move_event` with wall-clock minute deltas.
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
import { lang, locale, t } from "../i18n";
import { eventsChanged, loadStatus, state } from "../state";
import { toast } from "./dom";
import { editEvent, newEvent } from "./editor";
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
    extendedProps: { occ: o },
  };
}

export interface ViewChange {
  title: string;
  view: ViewName;
}

export class CalendarView {
  readonly fc: Calendar;

  constructor(
    el: HTMLElement,
    onChange: (c: ViewChange) => void,
    onLoaded: () => void,
    initial?: { view: ViewName; date: Date },
  ) {
    // English: "9:30 AM"; Chinese: "09:30" (FullCalendar's zh-cn default writes "18时").
    const timeFmt =
      lang() === "en"
        ? ({ hour: "numeric", minute: "2-digit", meridiem: "short" } as const)
        : ({ hour: "2-digit", minute: "2-digit", hour12: false } as const);
    this.fc = new Calendar(el, {
      plugins: [dayGridPlugin, timeGridPlugin, listPlugin, interactionPlugin],
      timeZone: "UTC",
      now: () => nowWall(state.status.time_zone),
      initialView: FC_VIEW[initial?.view ?? "month"],
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
      editable: true,
      selectable: true,
      selectMirror: true,
      eventTimeFormat: timeFmt,
      noEventsText: t("rem.empty"),
      events: (info: EventSourceFuncArg) =>
        api
          .occurrences({ from: toWallStr(info.start), to: toWallStr(info.end) })
          .then((list) => list.filter((o) => state.calendars.find((c) => c.id === o.event.calendar_id)?.visible !== false).map(toFcEvent))
          .catch((e: unknown) => {
            toast(explain(e as never).text, "error");
            return [];
          }),
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
        if (!busy) onLoaded();
      },
      datesSet: (arg) => onChange({ title: arg.view.title, view: viewNameOf(arg.view.type) }),
    });
    this.fc.render();
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
    this.fc.changeView(FC_VIEW[v]);
  }

  refetch(): void {
    this.fc.refetchEvents();
  }

  destroy(): void {
    this.fc.destroy();
  }
}
