"""The ICS-subscription step of the real-app test (issue #19 §1, desktop):
a feed served by an HTTP server this test owns on 127.0.0.1:0 is added
through "Add calendar -> From URL...", its event shows in the agenda view,
a changed feed reaches the view with "Refresh now", a feed that turns
into an HTML page shows its error beside the calendar while the last good
copy stays, and the host's own retry after the backoff brings the fixed
feed into the open view without a click or a reload.
"""

import datetime as dt
import http.server
import threading


class Feed:
    """Serves one ICS body (or an HTML page) at any path until stopped."""

    def __init__(self):
        self.body = b""
        self.content_type = "text/calendar"
        self.hits = 0
        feed = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the stdlib's name)
                feed.hits += 1
                self.send_response(200)
                self.send_header("Content-Type", feed.content_type)
                self.send_header("Content-Length", str(len(feed.body)))
                self.end_headers()
                self.wfile.write(feed.body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/team.ics" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve_events(self, events):
        """events: (uid, summary, start datetime UTC) tuples."""
        lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//kairos e2e//EN", "X-WR-CALNAME:E2E feed"]
        for uid, summary, start in events:
            lines += ["BEGIN:VEVENT", "UID:" + uid, "SUMMARY:" + summary,
                      "DTSTART:" + start.strftime("%Y%m%dT%H%M%SZ"),
                      "DTEND:" + (start + dt.timedelta(hours=1)).strftime("%Y%m%dT%H%M%SZ"),
                      "END:VEVENT"]
        lines.append("END:VCALENDAR")
        self.body = ("\r\n".join(lines) + "\r\n").encode()
        self.content_type = "text/calendar"

    def serve_html(self):
        self.body = b"<!doctype html><html><body>Please sign in</body></html>"
        self.content_type = "text/html"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


# Titles of the events in the open view.
TITLES_JS = "return [...document.querySelectorAll('.fc-event-title, .fc-list-event-title')].map((e) => e.textContent)"
# The feed status line of the calendar named arguments[0].
STATUS_JS = ("const r = [...document.querySelectorAll('.cal-row.is-feed')]"
             ".find((x) => x.querySelector('.cal-name')?.textContent === arguments[0]);"
             "if (!r) return null; const e = r.querySelector('.feed-error');"
             "return {when: r.querySelector('.feed-when')?.textContent, error: e ? e.textContent : null};")


def run(s, set_value, step, app_now):
    """Runs the step in session `s`; `app_now` is the app's clock (epoch s)."""
    feed = Feed()
    try:
        base = dt.datetime.fromtimestamp(app_now, dt.timezone.utc).replace(second=0, microsecond=0)
        feed.serve_events([("e2e-feed-1", "E2E feed standup", base + dt.timedelta(hours=3))])
        step("subscribe to %s through Add calendar -> From URL" % feed.url)
        s.wait_for("#add-calendar").click()
        s.wait_for("#add-calendar-url").click()
        s.wait_for("#subscribe-dialog")
        set_value(s, "#sub-url", feed.url)
        set_value(s, "#sub-every", "60")
        s.find("#sub-save").click()
        s.wait_until(lambda: not s.execute("return !!document.querySelector('#subscribe-dialog')"),
                     timeout=30, message="subscribe dialog closed (error: %s)"
                     % s.execute("const e = document.querySelector('#sub-error'); return e && e.textContent"))
        assert feed.hits >= 1, feed.hits
        s.wait_until(lambda: (s.execute(STATUS_JS, "E2E feed") or {}).get("when", "").startswith("Refreshed"),
                     timeout=10, message="feed status beside the calendar: %r" % s.execute(STATUS_JS, "E2E feed"))
        s.find('[data-view="agenda"]').click()
        s.wait_until(lambda: "E2E feed standup" in (s.execute(TITLES_JS) or []), timeout=10,
                     message="the feed's event in the agenda view: %r" % s.execute(TITLES_JS))
        step("the feed's event is in the agenda view")

        feed.serve_events([("e2e-feed-2", "E2E feed retro", base + dt.timedelta(hours=4))])
        s.execute("const r = [...document.querySelectorAll('.cal-row.is-feed')].find((x) => "
                  "x.querySelector('.cal-name')?.textContent === 'E2E feed'); r.querySelector('.feed-refresh').click();")
        s.wait_until(lambda: "E2E feed retro" in (s.execute(TITLES_JS) or [])
                     and "E2E feed standup" not in (s.execute(TITLES_JS) or []), timeout=20,
                     message="the changed feed replaced the event: %r" % s.execute(TITLES_JS))
        step("Refresh now: the changed feed replaced the event in the view")

        feed.serve_html()
        s.execute("const r = [...document.querySelectorAll('.cal-row.is-feed')].find((x) => "
                  "x.querySelector('.cal-name')?.textContent === 'E2E feed'); r.querySelector('.feed-refresh').click();")
        s.wait_until(lambda: (s.execute(STATUS_JS, "E2E feed") or {}).get("error") is not None, timeout=20,
                     message="the feed's error beside the calendar: %r" % s.execute(STATUS_JS, "E2E feed"))
        status = s.execute(STATUS_JS, "E2E feed")
        assert status["error"] == "Not a calendar (web page or empty)", status
        assert "E2E feed retro" in (s.execute(TITLES_JS) or []), "the last good copy stays"
        step("a feed turned into an HTML page: %r shown, the last good copy kept" % status["error"])

        # The failure is retried by the host's own loop after the backoff
        # (1 min ±10 %): the fixed feed must reach the open view with no
        # click and no reload of the page (the host's Changed event ->
        # kairos://data-changed).
        s.execute("window.__e2eNoReload = 1")
        feed.serve_events([("e2e-feed-3", "E2E feed planning", base + dt.timedelta(hours=5))])
        s.wait_until(lambda: "E2E feed planning" in (s.execute(TITLES_JS) or [])
                     and (s.execute(STATUS_JS, "E2E feed") or {}).get("error", "x") is None, timeout=120,
                     message="the background refresh reached the open view: %r %r"
                     % (s.execute(TITLES_JS), s.execute(STATUS_JS, "E2E feed")))
        assert s.execute("return window.__e2eNoReload") == 1, "the page was reloaded"
        step("the host's background refresh reached the open view (no click, no reload)")
        s.find('[data-view="week"]').click()
    finally:
        feed.stop()
