#!/usr/bin/env python3
"""Loads a lowalloc HTML report in headless Chromium and checks it through the page's test hooks
(window.lowalloc, data-ready, the 'lowalloc-first-picture' mark, #error).

Speaks the Chrome DevTools Protocol over --remote-debugging-pipe (Chromium reads commands from
its fd 3 and writes replies and events to its fd 4, each message a JSON text ended by a NUL
byte). Needs python3 and Chromium only.

    browser.py PAGE.html [--expect-function NAME] [--screenshot FILE.png] [--width 1400]
    browser.py PAGE.html --expect-error          # a page whose data cannot be decoded
    browser.py PAGE.html --screenshot FILE.png --screenshot-only   # just the picture
    browser.py PAGE.html --screenshot FILE.png --screenshot-only --width 1400 --height 1000

$LOWALLOC_CHROMIUM names the browser; $LOWALLOC_CHROMIUM_FLAGS adds flags (e.g. --no-sandbox
where Chromium's sandbox cannot start; it is always given as root).

The network is off: a proxy that does not answer for every URL, the page's network emulated
offline, and every request the page makes other than its own file and data:/blob: URLs is a
failure. So are console.error/console.warn, an uncaught exception and a browser log error.

Exit status: 0 all checks passed, 1 a check failed (each failure is printed), 2 usage or the
browser did not answer, 77 no Chromium found (a test skips).
"""

import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

METRICS = ["allocations", "bytes", "temporary", "leaked", "peak"]
SKIP = 77


class BrowserError(Exception):
    """The browser failed or did not answer in time (not a failed check of the page)."""


def find_chromium(explicit):
    if explicit:
        return explicit if shutil.which(explicit) else None
    env = os.environ.get("LOWALLOC_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """One headless Chromium with a DevTools pipe; one page target attached (flat sessions):
    attach_page() takes the first tab, open_page(url) a new one for each page in turn."""

    def __init__(self, executable, width, height):
        self.profile = tempfile.mkdtemp(prefix="lowalloc-chromium-")
        self.stderr = tempfile.TemporaryFile()
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        args = [
            executable,
            "--headless=new",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--user-data-dir=" + self.profile,
            "--remote-debugging-pipe",
            # No network: every proxied request goes to a port nobody listens on, loopback too.
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--metrics-recording-only",
            "--mute-audio",
            "--password-store=basic",
            "--use-mock-keychain",
            "--hide-scrollbars",
            "--window-size=%d,%d" % (width, height),
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        args[1:1] = os.environ.get("LOWALLOC_CHROMIUM_FLAGS", "").split()

        def child_fds():
            # dup first: a pipe end may itself be fd 3 or 4.
            a = os.dup(to_browser_r)
            b = os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.stderr,
                                        stderr=self.stderr, close_fds=False,
                                        preexec_fn=child_fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []  # (method, params), in arrival order
        self.session_events = {}  # the same, by session (None: the browser's own)
        self.session = None
        self.opened = None  # the tab open_page() made last

    def close(self):
        try:
            if self.process.poll() is None:
                try:
                    self.call("Browser.close", timeout=5, session=False)
                except (BrowserError, OSError):
                    pass
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            for fd in (self.to_browser, self.from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def browser_log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def _send(self, message):
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self.to_browser, data)
            data = data[written:]

    def _receive(self, deadline):
        """The next message, or None at the deadline."""
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed its DevTools pipe")
            self.buffer += chunk
        text, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(text)

    def call(self, method, params=None, timeout=30, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply is None:
                raise BrowserError("no answer to %s within %g s" % (method, timeout))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            self._note(reply)

    def _note(self, message):
        if "method" in message:
            event = (message["method"], message.get("params", {}))
            self.events.append(event)
            self.session_events.setdefault(message.get("sessionId"), []).append(event)

    def pump(self, seconds):
        """Collects the events that arrive within `seconds`."""
        deadline = time.monotonic() + seconds
        while True:
            message = self._receive(deadline)
            if message is None:
                return
            self._note(message)

    def wait_event(self, method, timeout=30, since=0):
        """The params of the attached page's first event `method` from its `since`-th event on
        (waits up to `timeout` seconds for it)."""
        events = self.session_events.setdefault(self.session, [])
        deadline = time.monotonic() + timeout
        while True:
            for name, params in events[since:]:
                if name == method:
                    return params
            since = len(events)
            message = self._receive(deadline)
            if message is None:
                raise BrowserError("no %s within %g s" % (method, timeout))
            self._note(message)

    def page_events(self):
        """The events of the attached page (since it was attached), in arrival order."""
        return list(self.session_events.get(self.session, []))

    def attach_page(self):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            target = pages[0]["targetId"]
        else:
            target = self.call("Target.createTarget", {"url": "about:blank"},
                               session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]

    def open_page(self, url, timeout=60):
        """Loads url in a new tab with the Page, Runtime, Log and Network events on, and attaches
        to it (evaluate() runs there, page_events() are its events); waits for its load event.
        The tab open_page() opened before is closed."""
        if self.opened:
            self.call("Target.closeTarget", {"targetId": self.opened}, session=False)
            self.opened = None
        self.opened = self.call("Target.createTarget", {"url": "about:blank"},
                                session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": self.opened,
                                                           "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        since = len(self.session_events.setdefault(self.session, []))
        navigation = self.call("Page.navigate", {"url": url})
        if navigation.get("errorText"):
            raise BrowserError("navigation to %s failed: %s" % (url, navigation["errorText"]))
        self.wait_event("Page.loadEventFired", timeout, since)

    def evaluate(self, expression, timeout=30):
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise PageError("%s: %s" % (expression.strip().splitlines()[0][:80], text))
        return result.get("result", {}).get("value")


class PageError(Exception):
    """An expression evaluated in the page threw."""


def console_text(params):
    parts = []
    for arg in params.get("args", []):
        if "value" in arg:
            parts.append(str(arg["value"]))
        else:
            parts.append(arg.get("description", arg.get("type", "?")))
    return " ".join(parts)


def collect_failures(events, page_url, log_levels=("error",), allowed=("data:", "blob:")):
    """The console errors, exceptions and requests among the events, as failure lines: a
    console.error/warn/assert, an uncaught exception, a browser log entry of `log_levels`, a
    request of anything but page_url and the URLs that start with one of `allowed`."""
    failures = []
    for method, params in events:
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning",
                                                                          "assert"):
            failures.append("console.%s: %s" % (params["type"], console_text(params)))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            failures.append("uncaught exception: %s" % text)
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            if entry.get("level") in log_levels:
                failures.append("browser log %s (%s): %s %s" % (
                    entry.get("level"), entry.get("source"), entry.get("text"),
                    entry.get("url", "")))
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if url.split("#", 1)[0] != page_url and not url.startswith(tuple(allowed)):
                failures.append("the page made a request: %s" % url)
    return failures


# Runs in the page: whether a canvas shows anything (more than one colour among its pixels).
CANVAS_HELPER = r"""
window.__lowallocCanvasDrawn = function (canvas) {
  if (!canvas || canvas.width === 0 || canvas.height === 0) return false;
  let data;
  try {
    data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  } catch (e) {
    return false;
  }
  const step = Math.max(1, Math.floor(data.length / 4 / 200000)) * 4;
  for (let i = step; i < data.length; i += step) {
    if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2] ||
        data[i + 3] !== data[3]) return true;
  }
  return false;
};
window.__lowallocSectionDrawn = function (id) {
  const section = document.getElementById(id);
  if (!section) return {exists: false, canvases: 0, drawn: false, elements: 0};
  const canvases = Array.from(section.querySelectorAll('canvas'));
  return {exists: true, canvases: canvases.length,
          drawn: canvases.some(window.__lowallocCanvasDrawn),
          elements: section.querySelectorAll('*').length};
};
true
"""


# The function name in the page's data that is NAME, or NAME followed by its parameters.
FULL_NAME = r"""
((name) => {
  const d = window.lowalloc.data;
  const names = (d.frames || []).map(f => (d.strings ? d.strings[f[0]] : f[0]) || '');
  return names.find(n => n === name) || names.find(n => n.startsWith(name + '(')) || null;
})(%s)
"""


# The function of the data's first site (a string; an index into strings is looked up).
TOP_SITE_FUNCTION = r"""
(() => {
  const d = window.lowalloc.data;
  if (!d.sites || !d.sites.length) return null;
  const f = d.sites[0].function;
  return typeof f === 'number' && d.strings ? d.strings[f] : String(f);
})()
"""


def timed(call):
    """A page expression that runs `call` (JS) and returns {value, ms}."""
    return ("(() => { const t0 = performance.now(); const value = (%s); "
            "return {value, ms: performance.now() - t0}; })()" % call)


class Checker:
    def __init__(self, browser, verbose):
        self.browser = browser
        self.failures = []
        self.figures = {"switch_ms": {}}
        self.verbose = verbose

    def fail(self, text):
        self.failures.append(text)

    def note(self, text):
        if self.verbose:
            print(text)

    def switch(self, name, call):
        try:
            result = self.browser.evaluate(timed(call))
        except PageError as error:
            self.fail("%s threw: %s" % (name, error))
            return None
        self.figures["switch_ms"][name] = round(result["ms"], 2)
        value = result.get("value")  # undefined is left out
        self.note("%-28s %8.2f ms  -> %s" % (name, result["ms"], json.dumps(value)))
        return value

    def pixels(self, what):
        stats = self.browser.evaluate("window.lowalloc.stats()")
        if not stats or not stats.get("canvasPixelsNonBlank"):
            self.fail("after %s: stats().canvasPixelsNonBlank is %s" % (
                what, json.dumps(stats and stats.get("canvasPixelsNonBlank"))))

    def run_api(self, expect_function):
        b = self.browser
        data = b.evaluate("(() => { const d = window.lowalloc.data; return {"
                          "threads: (d.threads || []).length, sites: (d.sites || []).length,"
                          "nodes: d.tree ? d.tree.parent.length : 0,"
                          "pruned: d.pruned ? d.pruned.nodes || 0 : 0}; })()")
        self.figures["data"] = data
        self.note("data: %s" % json.dumps(data))
        for section in ("summary", "flame", "timeline", "sizes", "sites", "callers"):
            state = b.evaluate("window.__lowallocSectionDrawn(%s)" % json.dumps(section))
            if not state["exists"]:
                self.fail("no #%s section" % section)
            elif section in ("flame", "timeline") and not state["drawn"]:
                self.fail("#%s: no canvas with anything drawn on it (%d canvases)" % (
                    section, state["canvases"]))
            elif section == "sizes" and not state["drawn"]:
                bars = b.evaluate("document.querySelectorAll('#sizes svg *, #sizes [data-bucket],"
                                  " #sizes .bar').length")
                if bars == 0:
                    self.fail("#sizes: the histogram is not drawn (no drawn canvas, no bars)")
        summary = b.evaluate("(document.querySelector('#summary pre') || {}).textContent || ''")
        if "allocations" not in summary:
            self.fail("#summary has no <pre> with the summary text")

        for metric in METRICS:
            self.switch("setMetric(%s)" % metric,
                        "window.lowalloc.setMetric(%s)" % json.dumps(metric))
            shown = b.evaluate("(document.getElementById('metric') || {}).value")
            if shown != metric:
                self.fail("setMetric(%s): #metric shows %s" % (metric, json.dumps(shown)))
            self.pixels("setMetric(%s)" % metric)
        b.evaluate("window.lowalloc.setMetric('allocations')")
        self.switch("setFold(false)", "window.lowalloc.setFold(false)")
        self.pixels("setFold(false)")
        self.switch("setFold(true)", "window.lowalloc.setFold(true)")
        self.pixels("setFold(true)")
        if data["threads"] > 0:
            self.switch("setThread(0)", "window.lowalloc.setThread(0)")
            self.pixels("setThread(0)")
            self.switch("setThread(-1)", "window.lowalloc.setThread(-1)")

        rows = b.evaluate("document.querySelectorAll('#sites tbody tr').length")
        self.figures["site_rows"] = rows
        if not rows:
            self.fail("#sites: the table has no rows")
        first = self.switch("sortSites(bytes)", "window.lowalloc.sortSites('bytes', true)")
        # The functions of the sites with the most bytes (ties: any of them comes first).
        top = b.evaluate("(() => { const d = window.lowalloc.data, s = d.sites || [];"
                         " const most = Math.max(...s.map(x => x.bytes));"
                         " return s.filter(x => x.bytes === most).map(x =>"
                         " typeof x.function === 'number' && d.strings ? d.strings[x.function]"
                         " : x.function); })()")
        if not isinstance(first, str) or not first:
            self.fail("sortSites('bytes', true) returned %s, not the first row's function"
                      % json.dumps(first))
        elif top and first not in top:
            self.fail("sortSites('bytes', true): first row %s, the most bytes are %s's" % (
                json.dumps(first), json.dumps(top)))
        self.switch("sortSites(allocations)", "window.lowalloc.sortSites('allocations', true)")

        if expect_function:
            found = self.switch("search(%s)" % expect_function,
                                "window.lowalloc.search(%s)" % json.dumps(expect_function))
            self.figures["search"] = found
            if not found or not found.get("matches"):
                self.fail("search(%s) found no frame: %s" % (expect_function, json.dumps(found)))
            else:
                text = b.evaluate("(document.getElementById('search-result') || {})"
                                  ".textContent || ''")
                if str(found["matches"]) not in text:
                    self.fail("#search-result does not show the %d matches: %s" % (
                        found["matches"], json.dumps(text)))
            self.pixels("search")
            # The page's names are the readable ones, with parameters: "f(int)" for "f".
            name = b.evaluate(FULL_NAME % json.dumps(expect_function)) or expect_function
            self.figures["selected"] = name
            picked = self.switch("select(%s)" % expect_function,
                                 "window.lowalloc.select(%s)" % json.dumps(name))
            self.figures["select"] = picked
            if not picked or picked.get("callers", 0) + picked.get("callees", 0) == 0:
                self.fail("select(%s): no callers and no callees: %s" % (
                    expect_function, json.dumps(picked)))
            filled = b.evaluate("document.querySelectorAll('#callers tbody tr').length")
            self.figures["caller_rows"] = filled
            if not filled:
                self.fail("#callers: no rows after select(%s)" % expect_function)
        stats = b.evaluate("window.lowalloc.stats()")
        self.figures["nodes_drawn"] = stats.get("nodesDrawn")
        if not stats.get("nodesDrawn"):
            self.fail("stats().nodesDrawn is %s" % json.dumps(stats.get("nodesDrawn")))


# Whether the page shows a message in #error.
ERROR_SHOWN = ("(() => { const e = document.getElementById('error'); return !!e &&"
               " e.getClientRects().length > 0 && e.textContent.trim().length > 0; })()")


def wait_for(browser, expression, timeout):
    """Polls until `expression` is true (false if not within `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    guarded = "(() => { try { return !!(%s); } catch (e) { return false; } })()" % expression
    while True:
        if browser.evaluate(guarded):
            return True
        if time.monotonic() > deadline:
            return False
        browser.pump(0.05)


def screenshot(browser, path, width, height=None):
    """A PNG of the page's top `height` pixels (default: the whole page, at most 16000)."""
    if not height:
        height = browser.evaluate("Math.ceil(Math.max(document.documentElement.scrollHeight,"
                                  " document.body ? document.body.scrollHeight : 0))")
        height = max(200, min(int(height or 800), 16000))
    browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                        "deviceScaleFactor": 1,
                                                        "mobile": False})
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": width,
                                                            "height": height, "scale": 1}},
                        timeout=60)
    with open(path, "wb") as out:
        out.write(base64.b64decode(shot["data"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", help="the HTML file")
    parser.add_argument("--expect-function", metavar="NAME",
                        help="a function the page must find by search and select")
    parser.add_argument("--search-top-site", action="store_true",
                        help="search and select the function of the data's first site (for"
                        " pages of any trace: the measurements)")
    parser.add_argument("--expect-error", action="store_true",
                        help="the page's data is corrupt: #error must show a message")
    parser.add_argument("--screenshot", metavar="FILE", help="write a full-page PNG here")
    parser.add_argument("--screenshot-only", action="store_true",
                        help="the picture of the page as loaded: no calls of window.lowalloc")
    parser.add_argument("--width", type=int, default=1400, help="viewport width (1400)")
    parser.add_argument("--height", type=int,
                        help="the screenshot's height: the page's top (default: all of it)")
    parser.add_argument("--timeout", type=float, default=20, help="seconds to be ready (20)")
    parser.add_argument("--max-first-picture-ms", type=float,
                        help="fail if the first picture takes longer")
    parser.add_argument("--max-switch-ms", type=float,
                        help="fail if switching a view takes longer")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON line at the end")
    parser.add_argument("--chromium", help="the browser (default: chromium on PATH, or "
                        "$LOWALLOC_CHROMIUM)")
    parser.add_argument("--quiet", action="store_true", help="print failures only")
    options = parser.parse_args()

    executable = find_chromium(options.chromium)
    if not executable:
        print("browser.py: no chromium found (install Debian's chromium): skipped")
        return SKIP
    page = os.path.abspath(options.page)
    if not os.path.isfile(page):
        print("browser.py: %s: no such file" % options.page, file=sys.stderr)
        return 2
    page_url = "file://" + page

    browser = Chromium(executable, options.width, 900)
    checker = Checker(browser, not options.quiet)
    started = time.monotonic()
    try:
        browser.attach_page()
        for domain in ("Runtime", "Log", "Network", "Page"):
            browser.call(domain + ".enable")
        browser.call("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        browser.call("Network.setCacheDisabled", {"cacheDisabled": True})
        navigation = browser.call("Page.navigate", {"url": page_url})
        if navigation.get("errorText"):
            checker.fail("navigation failed: %s" % navigation["errorText"])
            raise StopIteration
        if not wait_for(browser, "document.readyState === 'complete'", options.timeout):
            checker.fail("the page did not load within %g s" % options.timeout)
            raise StopIteration
        if options.expect_error:
            shown = wait_for(browser, ERROR_SHOWN, options.timeout)
            if not shown:
                checker.fail("#error shows no message within %g s" % options.timeout)
            else:
                text = browser.evaluate("document.getElementById('error').textContent.trim()")
                checker.note("#error: %s" % text)
                checker.figures["error"] = text
            ready = browser.evaluate("document.documentElement.dataset.ready || ''")
            if ready == "1":
                checker.fail("the page with corrupt data says it is ready (data-ready=1)")
        else:
            if not wait_for(browser, "document.documentElement.dataset.ready === '1' || "
                            + ERROR_SHOWN, options.timeout):
                checker.fail("the page is not ready (data-ready != 1) within %g s"
                             % options.timeout)
                raise StopIteration
            if browser.evaluate(ERROR_SHOWN):
                checker.fail("the page shows an error: %s" % browser.evaluate(
                    "document.getElementById('error').textContent.trim()"))
                raise StopIteration
            first = browser.evaluate("(() => { const e = performance.getEntriesByName("
                                     "'lowalloc-first-picture')[0]; return e ? e.startTime :"
                                     " null; })()")
            if first is None:
                checker.fail("no performance mark 'lowalloc-first-picture'")
            else:
                checker.figures["first_picture_ms"] = round(first, 1)
                checker.note("first picture: %.1f ms after navigation start" % first)
                if options.max_first_picture_ms and first > options.max_first_picture_ms:
                    checker.fail("first picture after %.1f ms (limit %g)" % (
                        first, options.max_first_picture_ms))
            browser.evaluate(CANVAS_HELPER)
            if not browser.evaluate("typeof window.lowalloc === 'object' && "
                                    "typeof window.lowalloc.setMetric === 'function'"):
                checker.fail("no window.lowalloc API")
            elif not options.screenshot_only:
                expect = options.expect_function
                if options.search_top_site:
                    expect = browser.evaluate(TOP_SITE_FUNCTION)
                checker.run_api(expect)
                if options.max_switch_ms:
                    for name, ms in checker.figures["switch_ms"].items():
                        if ms > options.max_switch_ms:
                            checker.fail("%s took %.1f ms (limit %g)" % (
                                name, ms, options.max_switch_ms))
        if options.screenshot:
            screenshot(browser, options.screenshot, options.width, options.height)
            print("screenshot: %s" % os.path.abspath(options.screenshot))
        browser.pump(0.1)  # late console messages
    except StopIteration:
        pass
    except PageError as error:
        checker.fail("evaluating in the page threw: %s" % error)
    except BrowserError as error:
        print("browser.py: %s\n--- browser output ---\n%s" % (error, browser.browser_log()),
              file=sys.stderr)
        browser.close()
        return 2
    finally:
        checker.failures[:0] = collect_failures(browser.events, page_url)
    browser.close()
    checker.figures["page_bytes"] = os.path.getsize(page)
    checker.figures["seconds"] = round(time.monotonic() - started, 2)
    if options.json:
        print(json.dumps(checker.figures, sort_keys=True))
    for failure in checker.failures:
        print("FAIL: %s" % failure)
    if checker.failures:
        return 1
    if not options.quiet:
        print("ok: %s" % options.page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
