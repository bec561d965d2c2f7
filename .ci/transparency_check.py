#!/usr/bin/env python3
"""Checks that `pipeline html` leaves no placeholder behind a transparent image (run by
.ci/browser-checks.sh).

Makes a red disc on a transparent 200×200 PNG (a logo), runs it through two outputs, one with an
LQIP and one with a dominant colour, and screenshots each output's `pipeline html` markup on a
white page in headless Chromium once the image has loaded. Around the disc, where the logo is
transparent, the page must show white: the LQIP's blur would leave a halo there, and the
dominant colour (of the transparent pixels, black) a dark square. As a control, the same page is
made from a manifest that does not say the image is transparent, and must show the placeholder:
otherwise the check could not see the defect it is for.

    python3 .ci/transparency_check.py PIPELINE_BINARY

Every wait is bounded: the run (2 min), the server's start (10 s), the screenshots (3 s of page
time).
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import check, failures, screenshots, serve, stop  # noqa: E402
from images import png_pixels  # noqa: E402

SIDE, RADIUS = 200, 70
PIPELINE = {
    "version": 1, "name": "logo", "inputs": ["logo.png"],
    "manifest": {"path": "out/manifest.json", "urlPrefix": "/img/"},
    "outputs": [
        {"name": "lqip", "encode": {"format": "webp"}, "path": "out/logo-lqip.webp", "placeholders": ["lqip"]},
        {"name": "colour", "encode": {"format": "webp"}, "path": "out/logo-colour.webp", "placeholders": ["dominantColor"]},
    ],
}
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body { margin: 0; background: #fff } img { display: block }</style></head>
<body>
%s
</body></html>
"""


def logo_png():
    """The logo's PNG bytes: opaque red inside the disc, transparent black outside."""
    rows = []
    for y in range(SIDE):
        row = bytearray([0])
        for x in range(SIDE):
            inside = (x - SIDE / 2) ** 2 + (y - SIDE / 2) ** 2 < RADIUS ** 2
            row += bytes([220, 30, 30, 255] if inside else [0, 0, 0, 0])
        rows.append(bytes(row))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", SIDE, SIDE, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b"")


def ring():
    """Points 3 to 8 px outside the disc's edge, all round it: transparent in the logo."""
    points = []
    for step in range(0, 360, 15):
        for distance in (3, 5, 8):
            x = SIDE / 2 + (RADIUS + distance) * math.cos(math.radians(step))
            y = SIDE / 2 + (RADIUS + distance) * math.sin(math.radians(step))
            points.append((int(round(x)), int(round(y))))
    return points + [(4, 4), (SIDE - 5, SIDE - 5)]


def seen(binary, manifest, output, root, label):
    """The page's pixels once the image has loaded: (width, height, bytes), or None."""
    html = subprocess.run([binary, "html", manifest, "logo.png", "--output", output, "--eager"],
                          capture_output=True, text=True, timeout=60)
    check(html.returncode == 0, "%s: pipeline html exited %d: %s" % (label, html.returncode, html.stderr))
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write(PAGE % html.stdout)
    server = None
    try:
        server, base = serve(root)
        shots = screenshots(base + "/index.html", 400, 300, 3)
    finally:
        stop(server)
    if not shots:
        check(False, "%s: Chromium gave no screenshot" % label)
        return None
    image = png_pixels(shots[-1][1])
    centre = pixel(image, SIDE // 2, SIDE // 2)
    check(centre[0] > 180 and centre[1] < 80, "%s: the logo had not loaded after 3 s (its centre is %s)" % (label, centre))
    return image


def pixel(image, x, y):
    width, _, data = image
    at = (y * width + x) * 3
    return list(data[at:at + 3])


def not_white(image):
    """The ring's points where the page does not show white."""
    return [(point, pixel(image, *point)) for point in ring() if min(pixel(image, *point)) < 248]


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="transparency-check-")
    try:
        with open(os.path.join(work, "logo.png"), "wb") as f:
            f.write(logo_png())
        with open(os.path.join(work, "logo.json"), "w") as f:
            json.dump(PIPELINE, f)
        run = subprocess.run([binary, "run", "--quiet", os.path.join(work, "logo.json")],
                             capture_output=True, text=True, timeout=120)
        check(run.returncode == 0, "pipeline run exited %d: %s" % (run.returncode, run.stderr))
        manifest = os.path.join(work, "out", "manifest.json")
        root = os.path.join(work, "site")
        os.makedirs(root)
        os.symlink(os.path.join(work, "out"), os.path.join(root, "img"))
        # The control: the same manifest without `transparent`, as a tool that ignores it reads it.
        with open(manifest) as f:
            entry = json.load(f)
        for output in entry["inputs"][0]["outputs"].values():
            check(output["placeholders"].get("transparent") is True, "the manifest does not say the logo is transparent")
            output["placeholders"].pop("transparent", None)
        control = os.path.join(work, "control.json")
        with open(control, "w") as f:
            json.dump(entry, f)
        for output in ("lqip", "colour"):
            image = seen(binary, manifest, output, root, output)
            if image:
                showing = not_white(image)
                check(not showing, "%s: the placeholder shows around the logo: %s" % (output, showing[:5]))
            image = seen(binary, control, output, root, output + " (control)")
            if image:
                check(not_white(image), "%s (control): no placeholder shows without `transparent`: "
                      "the check cannot see the defect" % output)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
    print("transparency in Chromium: no placeholder shows around a transparent logo; without the manifest's word, it does")


if __name__ == "__main__":
    main()
