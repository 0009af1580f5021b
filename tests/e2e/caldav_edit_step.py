"""The CalDAV account-editing step of the real-app test (issue #19 §2):
with the account caldav_step.py added (E2E Team chosen, E2E Home not) and
its Radicale still running, a calendar made on the server since (E2E Trips)
appears after "Refresh list" in the account's Edit dialog, marked new and
unticked; a wrong new password is refused by the server in plain words and
nothing is saved; then E2E Trips is ticked and the interval set to 15 min:
the host syncs the edited account at once, without "Sync now" (E2E Trips'
event shows in the week view), and the dialog shows the new interval when
opened again. Then its CA certificate: text that is no certificate is
refused in plain words; a real one (openssl's self-signed) is checked with
the server and kept (the dialog then says the account has one and offers
"trust only the usual authorities", which takes it back). The server is
plain HTTP here, so the check is the sign-in, not the TLS handshake: that
is tested against Radicale over HTTPS in crates/kairos-caldav/tests/it/tls.rs
and crates/kairos-app/tests/it/caldav_edit.rs.
"""

import datetime as dt
import os
import subprocess
import tempfile

import caldav_step

ROW = ".dav-account .dav-edit"
NAMES_JS = "return [...document.querySelectorAll('#dav-edit-calendars .dav-cal-name')].map((e) => e.textContent)"
TICKS_JS = "return [...document.querySelectorAll('input.dav-edit-pick')].map((b) => [b.value, b.checked])"
NEW_JS = ("return [...document.querySelectorAll('#dav-edit-calendars li[data-new=\"true\"] .dav-cal-name')]"
          ".map((e) => e.textContent)")
TRIP = "E2E CalDAV trip"


def open_edit(s):
    s.wait_for(ROW).click()
    s.wait_for("#caldav-edit-dialog")
    s.wait_until(lambda: len(s.execute(NAMES_JS) or []) >= 2, timeout=10, message="the edit dialog's calendars")


def refreshed(s, name):
    """Edit → Refresh list, until calendar `name` is listed as new."""
    open_edit(s)
    s.find("#dav-refresh").click()
    s.wait_until(lambda: name in (s.execute(NEW_JS) or []), timeout=30,
                 message="%s listed as new (error: %s)" % (name,
                 s.execute("const e = document.querySelector('#dav-edit-error'); return e && e.textContent")))


def close_edit(s):
    s.execute("document.querySelector('#caldav-edit-dialog').close()")
    s.wait_until(lambda: not s.execute("return !!document.querySelector('#caldav-edit-dialog')"), timeout=10,
                 message="edit dialog closed")


def self_signed_pem():
    """A self-signed certificate for localhost, as `openssl req -x509` makes it."""
    with tempfile.TemporaryDirectory() as d:
        cert = os.path.join(d, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", os.path.join(d, "key.pem"), "-out", cert, "-days", "30",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                       check=True, capture_output=True, timeout=30)
        with open(cert, encoding="ascii") as f:
            return f.read()


def save_and_wait_closed(s):
    s.find("#dav-save").click()
    s.wait_until(lambda: not s.execute("return !!document.querySelector('#caldav-edit-dialog')"), timeout=30,
                 message="dialog closed after Save (error: %s)"
                 % s.execute("const e = document.querySelector('#dav-edit-error'); return e && e.textContent"))


def ca_steps(s, set_value, step):
    open_edit(s)
    assert not s.execute("return !!document.querySelector('#dav-no-ca')"), "no CA yet: nothing to take back"
    s.execute("document.querySelector('#dav-new-ca-details').open = true")
    set_value(s, "#dav-new-ca", "not a certificate")
    s.find("#dav-save").click()
    s.wait_until(lambda: s.execute("const e = document.querySelector('#dav-edit-error');"
                                   "return !!e && !e.hidden && e.textContent"), timeout=30,
                 message="the refused CA's error")
    words = s.execute("return document.querySelector('#dav-edit-error').textContent")
    assert s.execute("return document.querySelector('#dav-new-ca').getAttribute('aria-invalid')") == "true", words
    step("a CA text that is no certificate: %r, nothing saved" % words[:60])

    set_value(s, "#dav-new-ca", self_signed_pem())
    save_and_wait_closed(s)
    open_edit(s)
    s.wait_for("#dav-ca-note")
    s.execute("document.querySelector('#dav-new-ca-details').open = true")
    s.find("#dav-no-ca").click()
    save_and_wait_closed(s)
    open_edit(s)
    assert not s.execute("return !!document.querySelector('#dav-ca-note')"), "the CA taken back"
    close_edit(s)
    step("a self-signed certificate checked with the server and kept; then taken back")


def themed_shots(s, set_value, dav, shot):
    """Dark and 简体中文: each with a calendar made on the server just before."""
    for suffix, values, theme, (path, name) in (
            ("-dark", {"set_theme": "dark"}, "dark", ("books", "E2E Books")),
            ("-zh-CN", {"set_theme": "light", "set_language": "zh-CN"}, "light", ("chores", "E2E 家务"))):
        dav.mkcalendar(path, name, "#8338ecff")
        caldav_step.settings(s, set_value, **values)
        s.wait_until(lambda: s.execute("return document.documentElement.dataset.theme") == theme
                     and s.execute("return !!document.querySelector('.dav-account .dav-edit')"),
                     timeout=10, message="theme %s applied" % theme)
        caldav_step.quiet(s)
        refreshed(s, name)
        shot("caldav-edit%s.png" % suffix)
        close_edit(s)
    caldav_step.settings(s, set_value, set_language="en", set_theme="system")


def run(s, set_value, step, app_now, dav, shot=None):
    shots = shot is not None
    shot = shot or (lambda name: None)
    dav.mkcalendar("trips", "E2E Trips", "#f4a261ff")
    start = dt.datetime.fromtimestamp(app_now + 90 * 60, dt.timezone.utc).replace(microsecond=0, second=0)
    dav.put_event("trips", "e2e-dav-trip", TRIP, start, 10)
    step("E2E Trips made on the server after the account was added")

    if shots:
        caldav_step.quiet(s)
    refreshed(s, "E2E Trips")
    ticks = dict(s.execute(TICKS_JS))
    assert ticks == {"E2E Home": False, "E2E Team": True, "E2E Trips": False}, ticks
    assert s.execute("return document.querySelector('#dav-every').value") == "300"
    shot("caldav-edit.png")
    step("Edit -> Refresh list: E2E Trips listed, marked new, unticked")

    set_value(s, "#dav-new-password", "not-the-password")
    s.find("#dav-save").click()
    s.wait_until(lambda: s.execute("const e = document.querySelector('#dav-edit-error');"
                                   "return !!e && !e.hidden && e.textContent"), timeout=30,
                 message="the refused password's error")
    words = s.execute("return document.querySelector('#dav-edit-error').textContent")
    assert words.startswith("The server refused the user name or password"), words
    step("a wrong new password: %r, nothing saved" % words[:60])

    set_value(s, "#dav-new-password", "")
    s.execute("const b = [...document.querySelectorAll('input.dav-edit-pick')].find((x) => x.value === 'E2E Trips');"
              "if (!b.checked) b.click();")
    set_value(s, "#dav-every", "900")
    s.find("#dav-save").click()
    s.wait_until(lambda: not s.execute("return !!document.querySelector('#caldav-edit-dialog')"), timeout=30,
                 message="dialog closed after Save (error: %s)"
                 % s.execute("const e = document.querySelector('#dav-edit-error'); return e && e.textContent"))
    s.wait_until(lambda: sorted(s.execute("return [...document.querySelectorAll('.cal-row:has(.cal-dav-badge)"
                                          " .cal-name')].map((e) => e.textContent)") or [])
                 == ["E2E Team", "E2E Trips"], timeout=15, message="E2E Trips synced with the account")
    # No "Sync now": the host syncs an edited account at once.
    caldav_step.shown_in_agenda(s, TRIP, 60)
    open_edit(s)
    assert s.execute("return document.querySelector('#dav-every').value") == "900"
    close_edit(s)
    step("E2E Trips chosen, every 15 min: its event in the agenda")
    ca_steps(s, set_value, step)
    if shots:
        themed_shots(s, set_value, dav, shot)
