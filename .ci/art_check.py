#!/usr/bin/env python3
"""Checks art direction in a real browser (run by .ci/browser-checks.sh).

Runs Pipelines/art-direction.json on the bundled samples with the given `pipeline` binary, makes
a page of `pipeline html` for one wide photo, serves it on loopback and loads it in headless
Chromium at a 500 px and a 1200 px viewport. At 500 px, inside the art entry's media query, the
browser must take a square crop (an AVIF of the entry's srcset, decoded 1:1); at 1200 px a file
of the output's own widths, as wide as the photo's aspect ratio.

    python3 .ci/art_check.py PIPELINE_BINARY

Every wait is bounded: the server's start (10 s), each Chromium load (60 s, three tries).
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import check, failures, page_result, serve, stop  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHOTO = "dune.jpg"
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<style>body { margin: 0 } img { display: block; width: 100%%; height: auto }</style></head>
<body>
%s
<pre id="result">pending</pre>
<script>
const img = document.querySelector('img');
const done = () => { document.getElementById('result').textContent = JSON.stringify(
  {innerWidth: window.innerWidth, currentSrc: img.currentSrc, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight}); };
if (img.complete) done(); else { img.addEventListener('load', done); img.addEventListener('error', done); }
</script>
</body></html>
"""


def make_site(binary, manifest, photo, work, check, output=None):
    """A folder to serve: `pipeline html`'s <picture> of `photo` from `manifest` (of `output`, when
    given) in a page reporting what the browser chose, the manifest's folder as /img."""
    command = [binary, "html", manifest, photo] + (["--output", output] if output else [])
    html = subprocess.run(command, capture_output=True, text=True, timeout=60)
    check(html.returncode == 0 and "<source media=" in html.stdout, "pipeline html gave no <source media>: " + html.stdout)
    root = os.path.join(work, "site")
    os.makedirs(root)
    os.symlink(os.path.dirname(manifest), os.path.join(root, "img"))
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write(PAGE % html.stdout)
    return root


def check_choices(base, check):
    """The page at `base` in Chromium at 500 px, inside the art entry's media query, and at
    1200 px: a square AVIF crop in the first, a wide AVIF of the output's own widths in the
    second. Failures go to `check(condition, message)`."""
    for width, square in [(500, True), (1200, False)]:
        seen, why = page_result(base + "/index.html", width, label="%d px" % width)
        if seen is None:
            check(False, "%d px: the page reported nothing: %s" % (width, why))
            continue
        chosen = seen["currentSrc"].replace(base, "")
        shape = seen["naturalWidth"] / max(1, seen["naturalHeight"])
        print("%d px: chose %s, decoded %d×%d" % (width, chosen, seen["naturalWidth"], seen["naturalHeight"]))
        if square:
            check("-1x1-" in chosen and chosen.endswith(".avif") and abs(shape - 1) < 0.02,
                  "%d px: expected a square AVIF crop, got %s (%.2f:1)" % (width, chosen, shape))
        else:
            check("-1x1-" not in chosen and chosen.endswith(".avif") and shape > 1.2,
                  "%d px: expected a wide AVIF of the output's own widths, got %s (%.2f:1)" % (width, chosen, shape))


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="art-check-")
    server = None
    try:
        shutil.copytree(os.path.join(REPO, "Pipelines", "samples"), os.path.join(work, "samples"))
        shutil.copy(os.path.join(REPO, "Pipelines", "art-direction.json"), work)
        run = subprocess.run([binary, "run", "--quiet", os.path.join(work, "art-direction.json")],
                             capture_output=True, text=True, timeout=600)
        check(run.returncode == 0, "pipeline run exited %d: %s" % (run.returncode, run.stderr))
        root = make_site(binary, os.path.join(work, "out", "art", "manifest.json"), "samples/" + PHOTO, work, check)
        server, base = serve(root)
        check_choices(base, check)
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
    print("art direction in Chromium: a square crop at 500 px, the wide photo at 1200 px")


if __name__ == "__main__":
    main()
