"""What the browser checks share (.ci/srcset_check.py, .ci/art_check.py,
.ci/avif_animation_check.py, .ci/website_check.py): a page served on loopback, headless Chromium
loading it until the page reports a result, and screenshots of a page over time.

A page reports by writing JSON into `<pre id="result">`, which starts as `pending`.
"""
import base64
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


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


def page_result(url, width, ratio=1, label=""):
    """The JSON the page at `url` reports in headless Chromium `width` px wide at device pixel
    ratio `ratio`, or (None, the last load) when it never does.

    Headless Chromium now and then exits 0 with no DOM at all (seen in fresh-clone CI runs, once
    three loads of one view in a row): such a load says nothing, so it is tried again, up to five
    times, a second apart, each within 60 s. A fresh profile each load, so no cached file from
    an earlier load is chosen instead; root in CI containers needs --no-sandbox."""
    load = None
    for attempt in range(5):
        if attempt:
            time.sleep(1)
        profile = tempfile.mkdtemp(prefix="chromium-check-")
        try:
            load = subprocess.run(
                ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + profile,
                 "--window-size=%d,900" % width, "--force-device-scale-factor=%d" % ratio, "--virtual-time-budget=20000",
                 "--dump-dom", url], capture_output=True, text=True, timeout=60)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        found = re.search(r'<pre id="result">(.*?)</pre>', load.stdout, re.S)
        if found and found.group(1) != "pending":
            text = found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
            return json.loads(text), load
        state = "still pending" if found else ("no result element" if load.stdout.strip() else "no DOM")
        print("%s: the page reported nothing on load %d (exit %d, %s)" % (label, attempt + 1, load.returncode, state))
    return None, load


def screenshots(url, width, height, seconds, interval=0.05):
    """PNG screenshots of the page at `url` in headless Chromium, `width`×`height` at device pixel
    ratio 1, taken `interval` seconds apart for `seconds` of real time: a list of (seconds since the
    first, PNG bytes).

    An animated <img> draws only its first frame onto a canvas, and --dump-dom or --screenshot
    with a virtual time budget do not advance it, so playing is seen the way a person sees it:
    the page rendering in real time, captured through the DevTools protocol. The protocol runs
    over Chromium's --remote-debugging-pipe (JSON messages ending in a NUL byte on file
    descriptors 3 and 4), which needs no WebSocket client. Every read waits at most 30 s."""
    profile = tempfile.mkdtemp(prefix="chromium-screenshots-")
    reads, to_chromium = os.pipe()
    from_chromium, writes = os.pipe()
    process = subprocess.Popen(
        ["bash", "-c", "exec chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=%s "
         "--remote-debugging-pipe about:blank 3<&%d 4>&%d" % (profile, reads, writes)],
        pass_fds=(reads, writes), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(reads)
    os.close(writes)
    pending = [b""]
    last_id = [0]

    def call(method, params=None, session=None):
        last_id[0] += 1
        message = {"id": last_id[0], "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(to_chromium, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" in pending[0]:
                text, pending[0] = pending[0].split(b"\0", 1)
                answer = json.loads(text)
                if answer.get("id") == last_id[0]:
                    return answer
            ready, _, _ = select.select([from_chromium], [], [], 30)
            chunk = os.read(from_chromium, 1 << 20) if ready else b""
            if not chunk:
                raise SystemExit("Chromium's DevTools pipe closed or said nothing for 30 s during %s" % method)
            pending[0] += chunk

    shots = []
    try:
        target = call("Target.createTarget", {"url": url})["result"]["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["result"]["sessionId"]
        call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
             session)
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            answer = call("Page.captureScreenshot", {"format": "png"}, session)
            # Before the page has a frame to show, Chromium answers with an error: try again.
            if "result" in answer:
                shots.append((time.monotonic() - start, base64.b64decode(answer["result"]["data"])))
            time.sleep(interval)
    finally:
        os.close(to_chromium)
        os.close(from_chromium)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)
    return shots
