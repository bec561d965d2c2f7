"""What the browser checks share (.ci/srcset_check.py, .ci/art_check.py,
.ci/avif_animation_check.py, .ci/website_check.py, .ci/transparency_check.py): the checks that
failed, a page served on loopback, headless Chromium loading it until the page reports a result,
and screenshots of a page over time.

A page reports by writing JSON into `<pre id="result">`, which starts as `pending`.

Chromium is driven through the DevTools protocol over --remote-debugging-pipe (JSON messages
ending in a NUL byte on file descriptors 3 and 4), which needs no WebSocket client. Waits are bounded
in real time rather than by a virtual time budget, so that a busy machine's slow loads and decodes
are waited for.
"""
import base64
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


# The checks that failed in this process, each printed as it failed: a script ends by raising
# SystemExit when there are any.
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(root):
    """Python's http.server on a free loopback port serving `root`, once it answers (10 s at
    most): the process, to terminate, and the base URL."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", root],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    deadline = time.monotonic() + 10
    while True:
        try:
            urllib.request.urlopen(base + "/index.html", timeout=2).read()
            return server, base
        except OSError:
            if time.monotonic() > deadline:
                server.terminate()
                raise SystemExit("the HTTP server did not start within 10 s")
            time.sleep(0.1)


def stop(server):
    if server:
        server.terminate()
        server.wait(timeout=10)


class ChromiumClosed(Exception):
    """Chromium's DevTools pipe closed, or said nothing for 30 s."""


class Chromium:
    """One headless Chromium with a fresh profile (so no file cached by an earlier load is
    chosen instead), driven over its DevTools pipe; use it in a `with` block. Root in CI
    containers needs --no-sandbox. Every read waits at most 30 s."""

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="chromium-check-")
        reads, self.to_chromium = os.pipe()
        self.from_chromium, writes = os.pipe()
        self.process = subprocess.Popen(
            ["bash", "-c", "exec chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=%s "
             "--remote-debugging-pipe about:blank 3<&%d 4>&%d" % (self.profile, reads, writes)],
            pass_fds=(reads, writes), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(reads)
        os.close(writes)
        self.pending = b""
        self.last_id = 0
        return self

    def __exit__(self, *_):
        os.close(self.to_chromium)
        os.close(self.from_chromium)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, params=None, session=None):
        """The answer to one DevTools command (events in between are dropped)."""
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_chromium, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" in self.pending:
                text, self.pending = self.pending.split(b"\0", 1)
                answer = json.loads(text)
                if answer.get("id") == self.last_id:
                    return answer
            ready, _, _ = select.select([self.from_chromium], [], [], 30)
            chunk = os.read(self.from_chromium, 1 << 20) if ready else b""
            if not chunk:
                raise ChromiumClosed("Chromium's DevTools pipe closed or said nothing for 30 s during %s" % method)
            self.pending += chunk

    def open(self, url, width, height, ratio=1):
        """A tab showing `url` in a viewport `width`×`height` CSS px at device pixel ratio `ratio`,
        set before the page loads so its srcset and media queries see it: the tab's session."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["result"]["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["result"]["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": ratio, "mobile": False}, session)
        self.call("Page.navigate", {"url": url}, session)
        return session


def page_result(url, width, ratio=1, label=""):
    """The JSON the page at `url` reports in headless Chromium `width` px wide (900 px high) at
    device pixel ratio `ratio`, and None; or None and what was last seen, when it does not report
    within 60 s of real time. A Chromium that closes its pipe is started again, three tries in
    all."""
    seen = "nothing"
    for attempt in range(3):
        try:
            with Chromium() as chromium:
                session = chromium.open(url, width, 900, ratio)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    answer = chromium.call("Runtime.evaluate", {
                        "expression": "(e => e ? e.textContent : null)(document.getElementById('result'))",
                        "returnByValue": True}, session)
                    text = answer.get("result", {}).get("result", {}).get("value")
                    # While the page is still being parsed, the element may be there with its
                    # text not yet (or in part): only the script's JSON is the result.
                    if text not in (None, "pending"):
                        try:
                            return json.loads(text), None
                        except ValueError:
                            seen = "a result that is not JSON yet: %r" % text[:200]
                    else:
                        seen = "still pending" if text == "pending" else "no result element"
                    time.sleep(0.1)
                return None, "%s after 60 s" % seen
        except ChromiumClosed as closed:
            seen = str(closed)
            print("%s: load %d: %s" % (label or url, attempt + 1, seen))
    return None, seen


def screenshots(url, width, height, seconds, interval=0.05):
    """PNG screenshots of the page at `url` in headless Chromium, `width`×`height` at device pixel
    ratio 1, taken `interval` seconds apart for `seconds` of real time: a list of (seconds since the
    first, PNG bytes).

    An animated <img> draws only its first frame onto a canvas, so playing is seen the way a person
    sees it: the page rendering in real time, captured."""
    shots = []
    with Chromium() as chromium:
        session = chromium.open(url, width, height)
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            answer = chromium.call("Page.captureScreenshot", {"format": "png"}, session)
            # Before the page has a frame to show, Chromium answers with an error: try again.
            if "result" in answer:
                shots.append((time.monotonic() - start, base64.b64decode(answer["result"]["data"])))
            time.sleep(interval)
    return shots
