#!/usr/bin/env python3
"""Checks a responsive image set in a real browser (run by .ci/browser-checks.sh).

Runs Pipelines/responsive.json on the bundled samples with the given `pipeline` binary, builds a
page from `pipeline html` for five photos (one wider than every width, one as wide as the widest, one narrower than
two widths, and two whose names need percent-encoding in a URL: a space, and `?`, `#` and `%`),
serves it on loopback with Python's http.server and loads it in headless Chromium at a narrow and
a wide viewport, each at device pixel ratio 1 and 2. For each load it checks that the browser's
`currentSrc` is the candidate the srcset rules pick (the smallest whose width is at least the slot
width times the pixel ratio, else the widest, of the first format the browser supports: AVIF), that
every candidate file is served with the byte size the manifest claims, and that the placeholder
renders: the <img>'s background is the manifest's LQIP data URI, which Chromium decodes. A name
with a space would split a srcset candidate, and `?` or `#` would end the URL's path: those photos
are loaded (a 404 or an ignored srcset gives no currentSrc) from URLs that decode to their paths.

    python3 .ci/srcset_check.py PIPELINE_BINARY

Every wait is bounded: the server's start (10 s), each Chromium load (60 s, three tries).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import check, failures, page_result, serve, stop  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = "(max-width: 700px) 100vw, 50vw"
# (window width, device pixel ratio): slot × ratio lands just under a candidate, or past them all.
VIEWS = [(600, 1), (600, 2), (1800, 1), (1800, 2)]
# Wider than every width; as wide as the widest; 800 px, so its own width stands in for 960 and 1280;
# then names a URL must percent-encode (a space; `?`, `#` and an escape-like `%20`).
PHOTOS = ["dune.jpg", "green-meadow.jpg", "narrow.jpg", "with space.jpg", "q?x#y%20.jpg"]


def slot_width(viewport):
    """The `sizes` above, evaluated as the spec says for a viewport `viewport` CSS px wide."""
    return viewport if viewport <= 700 else viewport / 2


def expected_candidate(files, slot, ratio):
    """The srcset rule: each candidate's density is width / slot; pick the smallest density at
    least the device pixel ratio, or the largest when none is."""
    by_width = sorted(files, key=lambda f: f["width"])
    for candidate in by_width:
        if candidate["width"] / slot >= ratio:
            return candidate
    return by_width[-1]


def page(pictures):
    # The script writes what the browser chose into the DOM once the images have loaded (or
    # failed), and decodes the LQIP itself, so one read of the DOM shows it all. `pipeline html`
    # marks images lazy, and how far below the viewport Chromium starts loading them depends on
    # its estimate of the network, so each image is scrolled into view in turn, as a reader
    # would, before it is waited for.
    return """<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<style>body { margin: 0 } img { display: block; width: 100%%; height: auto }
.slot { width: 50vw } @media (max-width: 700px) { .slot { width: 100vw } }</style></head>
<body>
%s
<pre id="result">pending</pre>
<script>
async function lqipWidth(style) {
  const match = /url\\("?(data:[^")]+)"?\\)/.exec(style);
  if (!match) return 0;
  const probe = new Image();
  probe.src = match[1];
  try { await probe.decode(); } catch (e) { return -1; }
  return probe.naturalWidth;
}
async function report() {
  const images = Array.from(document.querySelectorAll('img'));
  for (const img of images) {
    if (img.complete) continue;
    const loaded = new Promise(done => {
      img.addEventListener('load', done); img.addEventListener('error', done);
    });
    img.scrollIntoView();
    await loaded;
  }
  const results = [];
  for (const img of images) {
    const style = getComputedStyle(img).backgroundImage;
    results.push({currentSrc: img.currentSrc, naturalWidth: img.naturalWidth, background: style,
                  lqipWidth: await lqipWidth(style)});
  }
  document.getElementById('result').textContent =
    JSON.stringify({innerWidth: window.innerWidth, dpr: window.devicePixelRatio, images: results});
}
report();
</script>
</body></html>
""" % "\n".join('<div class="slot">%s</div>' % p for p in pictures)


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="srcset-check-")
    server = None
    try:
        shutil.copytree(os.path.join(REPO, "Pipelines", "samples"), os.path.join(work, "samples"))
        shutil.copy(os.path.join(REPO, "Pipelines", "responsive.json"), work)
        subprocess.run(["vips", "resize", os.path.join(work, "samples", "dune.jpg"), os.path.join(work, "samples", "narrow.jpg"), "0.5"],
                       check=True, timeout=60)
        for name in ["with space.jpg", "q?x#y%20.jpg"]:
            shutil.copy(os.path.join(work, "samples", "ladybird.jpg"), os.path.join(work, "samples", name))
        run = subprocess.run([binary, "run", "--quiet", os.path.join(work, "responsive.json")],
                             capture_output=True, text=True, timeout=600)
        check(run.returncode == 0, "pipeline run exited %d: %s" % (run.returncode, run.stderr))
        images = os.path.join(work, "out", "responsive")
        manifest_path = os.path.join(images, "manifest.json")
        with open(manifest_path) as f:
            manifest = json.load(f)

        pictures, entries = [], []
        for photo in PHOTOS:
            html = subprocess.run([binary, "html", manifest_path, photo, "--sizes", SIZES],
                                  capture_output=True, text=True, timeout=60)
            check(html.returncode == 0, "pipeline html %s exited %d: %s" % (photo, html.returncode, html.stderr))
            pictures.append(html.stdout)
            entry = next(i for i in manifest["inputs"] if i["source"].endswith("/" + photo))
            entries.append(entry["outputs"]["photo"])
        narrow = [f["width"] for f in entries[2]["formats"][0]["files"]]
        check(narrow == [320, 640, 800], "narrow.jpg: widths %s, expected 320, 640 and its own 800 once" % narrow)

        # The site: / holds the page, /img/ the manifest's folder (its urlPrefix).
        root = os.path.join(work, "site")
        os.makedirs(root)
        os.symlink(images, os.path.join(root, "img"))
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write(page(pictures))
        server, base = serve(root)

        # Every candidate is served, with the bytes the manifest claims.
        for output in entries:
            for format in output["formats"]:
                for file in format["files"]:
                    check(urllib.parse.unquote(file["url"]) == "/img/" + file["path"] and " " not in file["url"]
                          and "?" not in file["url"] and "#" not in file["url"],
                          "%s: not the percent-encoded URL of %s" % (file["url"], file["path"]))
                    body = urllib.request.urlopen(base + file["url"], timeout=10).read()
                    check(len(body) == file["bytes"], "%s: served %d bytes, the manifest says %d" % (file["url"], len(body), file["bytes"]))
                    check(os.path.getsize(os.path.join(images, file["path"])) == file["bytes"], "%s: size on disk" % file["path"])

        for width, ratio in VIEWS:
            view = "%d px wide at %dx" % (width, ratio)
            result, why = page_result(base + "/index.html", width, ratio, label=view)
            if result is None:
                check(False, "%s: the page reported nothing: %s" % (view, why))
                continue
            check(result["innerWidth"] == width and result["dpr"] == ratio,
                  "%s: the browser's viewport is %s px at %sx" % (view, result["innerWidth"], result["dpr"]))
            slot = slot_width(result["innerWidth"])
            for photo, output, seen in zip(PHOTOS, entries, result["images"]):
                avif = next(f for f in output["formats"] if f["format"] == "avif")
                want = expected_candidate(avif["files"], slot, ratio)
                chosen = seen["currentSrc"].replace(base, "")
                print("%s, %s: slot %g px, needs %g px: chose %s (expected %s)" % (view, photo, slot, slot * ratio, chosen, want["url"]))
                check(chosen == want["url"], "%s, %s: currentSrc %s, the srcset rules give %s" % (view, photo, chosen, want["url"]))
                # Loaded and decoded: with a `w` descriptor, naturalWidth is the file's width over
                # its density, that is the slot width (give or take rounding).
                check(abs(seen["naturalWidth"] - slot) <= 1,
                      "%s, %s: naturalWidth %d, expected the slot's %g (not loaded?)" % (view, photo, seen["naturalWidth"], slot))
                lqip = output["placeholders"]["lqip"]
                check(lqip in seen["background"], "%s, %s: the placeholder is not the <img>'s background" % (view, photo))
                data = base64.b64decode(lqip.split(",", 1)[1])
                check(data[:4] == b"RIFF" and data[8:12] == b"WEBP", "%s: the LQIP is not a WebP" % photo)
                check(seen["lqipWidth"] > 0 and seen["lqipWidth"] <= 16, "%s, %s: Chromium decoded the LQIP %d px wide" % (view, photo, seen["lqipWidth"]))
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
    print("srcset in Chromium: every view chose the expected candidate; files and placeholders as the manifest says")


if __name__ == "__main__":
    main()
