"""A minimal W3C WebDriver client for driving the Kairos webview through WebKitWebDriver.

Why: the app's UI runs in WebKitGTK, driven by `WebKitWebDriver` (see
/work/shared/FINDINGS.md). Python's urllib sends `Connection: close`, which
makes WebKitWebDriver (and tauri-driver in front of it) drop requests, so this
client keeps ONE persistent keep-alive http.client.HTTPConnection per session.
Standard library only; works with any Python 3.

    with Driver() as drv:                        # WebKitWebDriver on a free port
        s = drv.new_session("/path/to/kairos")   # or MiniBrowser
        s.find("#save").click()
        s.wait_until(lambda: s.find(".toast").text() == "Saved", timeout=5)
        s.screenshot("/tmp/after-save.png")

Only GET/DELETE requests are retried (once) after a dropped connection; a
POST is never re-sent, because clicking twice is worse than failing loudly.
"""
import base64
import http.client
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"
DROPPED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
NOT_YET = ("no such element", "stale element reference", "element not interactable")


class Keys:
    BACKSPACE, TAB, ENTER, SHIFT, CONTROL = "\ue003", "\ue004", "\ue007", "\ue008", "\ue009"
    ESCAPE, SPACE, ARROW_LEFT, ARROW_UP = "\ue00c", "\ue00d", "\ue012", "\ue013"
    ARROW_RIGHT, ARROW_DOWN, DELETE = "\ue014", "\ue015", "\ue017"


class WebDriverError(Exception):
    """A WebDriver error response; .error is the W3C code, e.g. "no such element"."""

    def __init__(self, method, path, status, error, message, body):
        self.status, self.error, self.message, self.body = status, error, message, body
        super().__init__("%s %s -> HTTP %s %s: %s\n  response body: %s"
                         % (method, path, status, error, message, body[:2000]))


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Driver:
    """A WebKitWebDriver process on 127.0.0.1:port (its output goes to log_path)."""

    def __init__(self, binary="WebKitWebDriver", port=None, log_path=None, env=None,
                 args=()):
        self.binary, self.port, self.env, self.args = binary, port, env or {}, list(args)
        self.host, self.fixed_port = "127.0.0.1", port is not None
        self.log_path = log_path or tempfile.mkstemp(prefix="webkitwebdriver-", suffix=".log")[1]
        self.proc, self.stopped = None, False

    def start(self, timeout=10.0):
        """Start the driver and wait (bounded) until GET /status answers ready.

        With no fixed port, an early exit (port taken since free_port) is retried
        twice on a new port."""
        env = dict(os.environ, TAURI_WEBVIEW_AUTOMATION="true", **self.env)
        deadline = time.monotonic() + timeout
        for attempt in range(1 if self.fixed_port else 3):
            self.port = self.port if self.fixed_port else free_port()
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(
                    [self.binary, "--port=%d" % self.port] + self.args, stdout=log,
                    stderr=subprocess.STDOUT, env=env, start_new_session=True)
            if self._wait_ready(deadline):
                return self
        raise RuntimeError("%s exited with %s before answering; log:\n%s"
                           % (self.binary, self.proc.returncode, self.log_tail()))

    def _wait_ready(self, deadline):
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if self.status().get("ready"):
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("%s did not answer /status on port %d in time; log:\n%s"
                           % (self.binary, self.port, self.log_tail()))

    def status(self):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=2)
        try:
            conn.request("GET", "/status")
            return json.loads(conn.getresponse().read() or b"{}").get("value", {})
        finally:
            conn.close()

    def new_session(self, app, args=(), timeout=60.0, extra_capabilities=None):
        """Launch `app` (a Tauri binary or MiniBrowser) under the driver."""
        caps = {"webkitgtk:browserOptions": {"binary": app, "args": list(args)}}
        caps.update(extra_capabilities or {})
        return Session(self.host, self.port, caps, timeout)

    def log_tail(self, size=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-size:].decode("utf-8", "replace")
        except OSError as e:
            return "(no log: %s)" % e

    def stop(self, timeout=5.0):
        """SIGTERM the driver's process group (driver + the app it launched, even
        if the driver itself already died), then SIGKILL the driver if needed."""
        if not self.proc or self.stopped:
            return
        self.stopped = True
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout)

    def __enter__(self):
        return self.start() if self.proc is None else self

    def __exit__(self, *exc):
        self.stop()


class _Finder:
    def find(self, css):
        """The first matching element (descendants, for an Element); raises
        WebDriverError with .error == "no such element" if there is none."""
        return self._cmd("POST", "/element", {"using": "css selector", "value": css})

    def find_all(self, css):
        return self._cmd("POST", "/elements", {"using": "css selector", "value": css})


class Session(_Finder):
    """One WebDriver session over one keep-alive connection."""

    def __init__(self, host, port, capabilities, timeout=60.0, request_timeout=60.0):
        self.conn = http.client.HTTPConnection(host, port, timeout=request_timeout)
        self.request_timeout = request_timeout
        self.retries = 0  # GET/DELETE re-sent after a dropped connection
        self.id = None
        value = self._request("POST", "/session",
                              {"capabilities": {"alwaysMatch": capabilities}}, timeout)
        self.id, self.capabilities = value["sessionId"], value.get("capabilities", {})

    # --- transport -------------------------------------------------------------
    def _request(self, method, path, body=None, timeout=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json; charset=utf-8"} if data else {}
        for attempt in (0, 1):
            self.conn.timeout = timeout or self.request_timeout
            if self.conn.sock:
                self.conn.sock.settimeout(self.conn.timeout)
            try:
                self.conn.request(method, path, data, headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except DROPPED as e:
                self.conn.close()
                if attempt or method not in ("GET", "DELETE"):
                    raise ConnectionError("%s %s: connection dropped (%r); not re-sent"
                                          % (method, path, e)) from e
                self.retries += 1
            except OSError as e:
                self.conn.close()
                kind = TimeoutError if isinstance(e, TimeoutError) else ConnectionError
                raise kind("%s %s: %r" % (method, path, e)) from e
        text = raw.decode("utf-8", "replace")
        try:
            value = json.loads(text).get("value") if text else None
        except ValueError:
            raise WebDriverError(method, path, resp.status, "invalid response",
                                 "body is not JSON", text) from None
        if resp.status >= 400:
            v = value if isinstance(value, dict) else {}
            raise WebDriverError(method, path, resp.status, v.get("error", "?"),
                                 v.get("message", ""), text)
        return value

    def command(self, method, path, body=None, timeout=None):
        """A command relative to /session/{id}; returns the unwrapped value."""
        return self._unwrap(self._request(method, "/session/%s%s" % (self.id, path),
                                          self._wrap(body), timeout))

    _cmd = command

    def _wrap(self, v):
        if isinstance(v, Element):
            return {ELEMENT_KEY: v.id}
        if isinstance(v, (list, tuple)):
            return [self._wrap(x) for x in v]
        if isinstance(v, dict):
            return {k: self._wrap(x) for k, x in v.items()}
        return v

    def _unwrap(self, v):
        if isinstance(v, dict):
            if ELEMENT_KEY in v and len(v) == 1:
                return Element(self, v[ELEMENT_KEY])
            return {k: self._unwrap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self._unwrap(x) for x in v]
        return v

    # --- page ------------------------------------------------------------------
    def navigate(self, url):
        self.command("POST", "/url", {"url": url})

    def url(self):
        return self.command("GET", "/url")

    def title(self):
        return self.command("GET", "/title")

    def source(self):
        return self.command("GET", "/source")

    def execute(self, script, *args):
        """Run a function body synchronously; `return x` gives x (elements become Element)."""
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def execute_async(self, script, *args, timeout=None):
        """Run a function body; it must call arguments[arguments.length - 1](result)."""
        return self.command("POST", "/execute/async",
                            {"script": script, "args": list(args)}, timeout)

    def screenshot(self, path=None):
        """PNG bytes of the viewport; also written to path if given."""
        return _png(self.command("GET", "/screenshot"), path)

    def wait_until(self, fn, timeout=10.0, step=0.05, message=None):
        """Call fn() until it returns something truthy (returned); bounded by timeout.

        WebDriverErrors meaning "not there yet" (no such element, stale, not
        interactable) count as falsy; other errors propagate at once."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                result = fn()
                if result:
                    return result
                last = "returned %r" % (result,)
            except WebDriverError as e:
                if e.error not in NOT_YET:
                    raise
                last = "%s: %s" % (e.error, e.message)
            if time.monotonic() >= deadline:
                raise TimeoutError("%s not true after %.1fs (last: %s)"
                                   % (message or getattr(fn, "__name__", "condition"),
                                      timeout, last))
            time.sleep(step)

    def wait_for(self, css, timeout=10.0):
        """The first element matching css, waiting up to timeout for it to appear."""
        return self.wait_until(lambda: self.find(css), timeout, message="element %r" % css)

    def delete(self):
        if self.id:
            try:
                self._request("DELETE", "/session/%s" % self.id)
            finally:
                self.id = None
                self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.delete()


class Element(_Finder):
    def __init__(self, session, element_id):
        self.session, self.id = session, element_id

    def _cmd(self, method, what, body=None):
        return self.session.command(method, "/element/%s%s" % (self.id, what), body)

    def click(self):
        self._cmd("POST", "/click", {})

    def send_keys(self, text):
        """Type text (Keys.* for special keys) into the element."""
        self._cmd("POST", "/value", {"text": text})

    def clear(self):
        self._cmd("POST", "/clear", {})

    def text(self):
        return self._cmd("GET", "/text")

    def attribute(self, name):
        return self._cmd("GET", "/attribute/%s" % name)

    def prop(self, name):
        """A DOM property, e.g. prop("value") of an <input>, prop("checked")."""
        return self._cmd("GET", "/property/%s" % name)

    def tag_name(self):
        return self._cmd("GET", "/name")

    def is_enabled(self):
        return self._cmd("GET", "/enabled")

    def is_displayed(self):
        return self._cmd("GET", "/displayed")

    def screenshot(self, path=None):
        return _png(self._cmd("GET", "/screenshot"), path)

    def __repr__(self):
        return "<Element %s>" % self.id


def _png(b64, path):
    data = base64.b64decode(b64)
    if path:
        with open(path, "wb") as f:
            f.write(data)
    return data
