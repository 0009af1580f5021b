#!/usr/bin/env python3
"""Self-test of webdriver.py against WebKitWebDriver + MiniBrowser (no Kairos app needed).

Why: proves the client (keep-alive transport, element commands, scripts,
screenshots, error reporting) works on this machine before any app test uses
it. Needs a display: run under `xvfb-run -a` (selftest.sh does).

    selftest_webdriver.py [--browser PATH] [--out DIR]
Exit 0 on success, 1 with a message on the first failed check.
"""
import argparse
import os
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webdriver import Driver, Keys, WebDriverError  # noqa: E402

MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
PAGE = """<!doctype html><html><head><title>wd selftest</title></head><body>
<h1 id="h">ready</h1>
<button id="b" onclick="document.getElementById('h').textContent='clicked '+(++n)">go</button>
<input id="i" value="start" data-kind="text-field">
<ul><li class="x">one</li><li class="x">two</li><li class="x">three</li></ul>
<script>var n = 0;
document.getElementById('i').addEventListener('keydown', function (e) {
  if (e.key === 'Enter') document.getElementById('h').textContent = 'enter:' + this.value;
});
setTimeout(function () {
  var p = document.createElement('p'); p.id = 'late'; p.textContent = 'late';
  document.body.appendChild(p);
}, 300);</script></body></html>"""


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("  ok  %s" % what, flush=True)


def run(browser, out):
    t0 = time.monotonic()
    with Driver(log_path=os.path.join(out, "webkitwebdriver.log")) as drv:
        check(drv.status().get("ready") is True, "driver /status ready on port %d" % drv.port)
        # MiniBrowser needs --automation itself (without it POST /session hangs);
        # a Tauri app needs TAURI_WEBVIEW_AUTOMATION=true instead (Driver sets it).
        with drv.new_session(browser, ["--automation"], timeout=30) as s:
            check(bool(s.id), "new session %s (%.1fs)" % (s.id, time.monotonic() - t0))
            s.navigate("data:text/html;charset=utf-8," + urllib.parse.quote(PAGE))
            check(s.title() == "wd selftest", "title of data: URL page")
            h = s.find("#h")
            check(h.text() == "ready", "text before click")
            s.find("#b").click()
            s.find("#b").click()
            check(s.find("#h").text() == "clicked 2", "two clicks change text")
            i = s.find("#i")
            check(i.prop("value") == "start" and i.attribute("data-kind") == "text-field",
                  "property and attribute")
            i.clear()
            i.send_keys("hello wörld")
            check(i.prop("value") == "hello wörld", "clear + send_keys (non-ASCII)")
            i.send_keys(Keys.ENTER)
            check(h.text() == "enter:hello wörld", "special key ENTER reaches a handler")
            items = s.find_all("li.x")
            check([e.text() for e in items] == ["one", "two", "three"], "find_all")
            check(s.find("ul").find("li:last-child").text() == "three", "element.find")
            check(s.execute("return arguments[0] + arguments[1];", 2, 40) == 42,
                  "execute sync with args")
            el = s.execute("return document.querySelector('#b');")
            check(el.tag_name().lower() == "button", "execute returns an Element")
            check(s.execute("return arguments[0].id;", el) == "b", "Element as script arg")
            v = s.execute_async("var done = arguments[arguments.length - 1];"
                                "setTimeout(function () { done({a: [1, 'x']}); }, 100);")
            check(v == {"a": [1, "x"]}, "execute async")
            late = s.wait_for("#late", timeout=5)
            check(late.text() == "late", "wait_for element added after 300 ms")
            try:
                s.find("#nope")
                check(False, "missing element raises")
            except WebDriverError as e:
                check(e.error == "no such element" and e.status == 404,
                      "missing element raises WebDriverError(no such element, 404)")
            try:
                s.wait_until(lambda: s.find("#nope"), timeout=0.3)
                check(False, "wait_until times out")
            except TimeoutError as e:
                check("no such element" in str(e), "wait_until times out with last error")
            png_path = os.path.join(out, "selftest.png")
            png = s.screenshot(png_path)
            check(png[:8] == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png_path) > 1000,
                  "screenshot %s (%d bytes)" % (png_path, len(png)))
            check(s.find("#b").screenshot()[:4] == b"\x89PNG", "element screenshot")
            for _ in range(50):  # many requests on the one keep-alive connection
                s.title()
            check(s.retries == 0, "60+ requests, no dropped connection (retries=0)")
        check(s.id is None, "session deleted")
    check(drv.proc.poll() is not None, "driver stopped")
    print("webdriver selftest passed in %.1fs" % (time.monotonic() - t0), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--browser", default=MINIBROWSER)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if not os.access(a.browser, os.X_OK):
        print("SKIP: no WebKitGTK browser at %s" % a.browser)
        return 77
    out = a.out or tempfile.mkdtemp(prefix="wd-selftest-")
    os.makedirs(out, exist_ok=True)
    try:
        run(a.browser, out)
    except Exception as e:  # report, with the driver log location
        print("FAIL: %s: %s\n(driver log in %s)" % (type(e).__name__, e, out))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
