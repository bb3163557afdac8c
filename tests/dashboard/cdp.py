"""A minimal Chrome DevTools Protocol client for the dashboard tests.

It drives Debian's headless Chromium over one websocket to one page target:
navigate, evaluate JavaScript, wait for a condition, type, press keys, click and
take screenshots, and it collects the page's JavaScript errors. Only the standard
library and websocket-client (Debian's python3-websocket) are used, so it runs under
Debian's /usr/bin/python3 (another python3 first on PATH may lack websocket-client).

    with Browser.launch() as browser:
        page = browser.page
        page.navigate("http://127.0.0.1:8470/")
        page.wait_for("document.querySelector('h1')")
        page.press("Tab")
"""

import base64
import collections
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import websocket

CHROMIUM = "/usr/bin/chromium"

# For each key press() knows: its DOM `code`, Windows virtual key code and the
# text it types (keys that type text need it for keypress and click-on-Enter).
KEYS = {
    "Tab": ("Tab", 9, ""),
    "Enter": ("Enter", 13, "\r"),
    "Escape": ("Escape", 27, ""),
    " ": ("Space", 32, " "),
    "ArrowLeft": ("ArrowLeft", 37, ""),
    "ArrowUp": ("ArrowUp", 38, ""),
    "ArrowRight": ("ArrowRight", 39, ""),
    "ArrowDown": ("ArrowDown", 40, ""),
    "Home": ("Home", 36, ""),
    "End": ("End", 35, ""),
}
# CDP's modifier bit mask, for key names such as "Shift+Tab".
MODIFIERS = {"Alt": 1, "Ctrl": 2, "Meta": 4, "Shift": 8}


class CDPError(RuntimeError):
    """A protocol error, or an exception thrown by evaluated JavaScript."""


class Page:
    """One page target, driven over its websocket."""

    def __init__(self, ws_url, width, height):
        # Chromium refuses websocket clients that send an Origin header it was not
        # told to allow (--remote-allow-origins); websocket-client sends one unless
        # it is suppressed.
        self._ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self._next_id = 0
        self._events = collections.deque()  # events read while waiting for replies
        self._errors = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        # The viewport's size, exactly (--window-size would leave it shorter).
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method, **params):
        """Sends one command and returns its result; events read meanwhile are kept."""
        self._next_id += 1
        self._ws.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            self._on_event(message)

    def _on_event(self, message):
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self._errors.append(details.get("exception", {}).get("description")
                                or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self._errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                         for a in params.get("args", [])))
        self._events.append(message)

    def _wait_event(self, method, timeout):
        """Returns the params of the next event named method (buffered ones first)."""
        deadline = time.monotonic() + timeout
        while True:
            while self._events:
                message = self._events.popleft()
                if message.get("method") == method:
                    return message.get("params", {})
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {method} within {timeout} s")
            self._ws.settimeout(remaining)
            try:
                self._on_event(json.loads(self._ws.recv()))
            except websocket.WebSocketTimeoutException:
                pass
            finally:
                self._ws.settimeout(30)

    def navigate(self, url, timeout=30):
        """Loads url and waits for its load event."""
        self._events.clear()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise CDPError(f"navigate {url}: {result['errorText']}")
        self._wait_event("Page.loadEventFired", timeout)

    def evaluate(self, expression):
        """Returns the value of a JavaScript expression (promises are awaited)."""
        result = self.call("Runtime.evaluate", expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CDPError(f"JavaScript threw: {text}\n  in: {expression}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=15, interval=0.1):
        """Polls expression until it is truthy and returns its value.

        Truthy as JavaScript has it: an element is, though it comes back as {}. An
        expression that throws counts as not yet true (the element it reads may not
        exist yet); the last exception is in the timeout's message.
        """
        probe = f"(async () => {{ const v = await ({expression}); return v ? [v] : null; }})()"
        deadline = time.monotonic() + timeout
        last_error = None
        while True:
            try:
                found = self.evaluate(probe)
                if found is not None:
                    return found[0]
            except CDPError as e:
                last_error = e
            if time.monotonic() > deadline:
                break
            time.sleep(interval)
        try:
            body = self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
        except CDPError as e:
            body = f"(unreadable: {e})"
        raise TimeoutError(f"not true within {timeout} s: {expression}\n"
                           f"last error: {last_error}\npage text:\n{body}")

    def screenshot(self, path, full_page=False):
        """Writes a PNG of the viewport, or of the whole page."""
        params = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["captureBeyondViewport"] = True
            params["clip"] = {"x": 0, "y": 0, "width": size["width"],
                              "height": size["height"], "scale": 1}
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def press(self, key):
        """Presses and releases one key of KEYS, with modifiers: "Shift+Tab"."""
        *mods, name = key.split("+")
        code, vk, text = KEYS[name]
        modifiers = sum(MODIFIERS[m] for m in mods)
        common = {"key": name, "code": code, "windowsVirtualKeyCode": vk,
                  "modifiers": modifiers}
        # A key that types text goes down as keyDown with it (so Enter clicks a
        # focused button); others as rawKeyDown, as a real keyboard sends them.
        if text:
            self.call("Input.dispatchKeyEvent", type="keyDown", text=text, **common)
        else:
            self.call("Input.dispatchKeyEvent", type="rawKeyDown", **common)
        self.call("Input.dispatchKeyEvent", type="keyUp", **common)

    def type(self, text):
        """Types text into the focused element."""
        self.call("Input.insertText", text=text)

    def click(self, selector):
        """Clicks the center of the first element matching a CSS selector."""
        box = self.evaluate(f"""(() => {{
            const e = document.querySelector({json.dumps(selector)});
            if (!e) return null;
            e.scrollIntoView({{block: "center"}});
            const r = e.getBoundingClientRect();
            return {{x: r.left + r.width / 2, y: r.top + r.height / 2}};
        }})()""")
        if box is None:
            raise CDPError(f"click: no element matches {selector}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"],
                      button="left", clickCount=1)

    def console_errors(self):
        """The JavaScript exceptions and console.error calls seen so far."""
        return list(self._errors)

    def close(self):
        self._ws.close()


class Browser:
    """A headless Chromium with its own temporary profile and one page."""

    def __init__(self, process, tmp, page):
        self.process, self._tmp, self.page = process, tmp, page

    @classmethod
    def launch(cls, width=1400, height=900, timeout=30):
        tmp = tempfile.mkdtemp(prefix="corral-chromium-")
        profile = os.path.join(tmp, "profile")
        with open(os.path.join(tmp, "chromium.log"), "wb") as log:
            # A session of its own, so close() can end Chromium's helper processes too.
            process = subprocess.Popen(
                [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--no-first-run",
                 f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        browser = cls(process, tmp, None)
        try:
            port = browser._wait_port(os.path.join(profile, "DevToolsActivePort"), timeout)
            browser.page = Page(browser._page_url(port, timeout), width, height)
        except BaseException:
            browser.close()
            raise
        return browser

    def _log_tail(self):
        with open(os.path.join(self._tmp, "chromium.log"), errors="replace") as f:
            return f.read()[-2000:]

    def _wait_port(self, path, timeout):
        """The port Chromium chose: DevToolsActivePort's first line, once complete."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CDPError(f"chromium exited with {self.process.returncode}:\n"
                               + self._log_tail())
            try:
                with open(path) as f:
                    first = f.readline()
                if first.endswith("\n"):
                    return int(first)
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise CDPError(f"chromium wrote no {path} within {timeout} s:\n" + self._log_tail())

    def _page_url(self, port, timeout):
        """The websocket URL of the page target (about:blank) once it is listed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.05)
        raise CDPError(f"chromium listed no page target within {timeout} s")

    def close(self):
        """Ends Chromium and every process of its session, and removes the profile."""
        if self.page:
            self.page.close()
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._signal(signal.SIGKILL)  # whatever outlived the browser process
        self.process.wait()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _signal(self, sig):
        """Signals Chromium's process group, if any of it is left."""
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
