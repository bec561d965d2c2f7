"""What the browser checks share (.ci/srcset_check.py, .ci/art_check.py): a page served on
loopback, and headless Chromium loading it until the page reports a result.

A page reports by writing JSON into `<pre id="result">`, which starts as `pending`.
"""
import json
import re
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
