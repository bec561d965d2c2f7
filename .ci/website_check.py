#!/usr/bin/env python3
"""Checks Pipelines/website.json, the example that uses every web feature in one file, from the
built binary (run by .ci/browser-checks.sh).

Runs the pipeline on the bundled samples (photographs, a face, an animated GIF, a focal-point
file) in a folder of its own, with one output added: the watermarked output again without its
text, to compare with. Then checks, from the files it wrote:
- the crops: each square art crop of a photo with a focal point is the window of the photo the
  focal point asks for (as near its centre as the photo allows), found by sliding the crop
  along the photo; the face banner's window holds the face (its box is marked by hand below),
  which a crop about the centre would cut off;
- the text's place: the pixels the text changed lie in the image's south-east corner, inside
  the margin;
- the animated AVIF's frames: as many as the GIF's, each with the GIF's delay (`avifdec --info`),
  and Chromium playing it in an <img>: screenshots over time show its frames in order;
- the choice Chromium makes from `pipeline html`'s <picture>: a square AVIF crop at a 500 px
  viewport, a wide AVIF at 1200 px.

    python3 .ci/website_check.py PIPELINE_BINARY

Every wait is bounded: the run (10 min), the server's start (10 s), each Chromium load (60 s, three
tries), the screenshots (6 s of page time).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from art_check import check_choices, make_site  # noqa: E402
from browser import check, failures, screenshots, serve, stop  # noqa: E402
from images import difference, header, pixels, png_pixels, vips, window_offset  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The astronaut's face, brows to chin and cheek to cheek, in the 320×320 sample.
FACE_TOP, FACE_BOTTOM = 50, 103


def check_focus_crops(work, out):
    """Each 640 px square art crop against the photo scaled to 640 px high (all samples are
    landscape, so the square slides along x), compared at a quarter of that scale."""
    with open(os.path.join(work, "focus-points.json")) as f:
        points = json.load(f)
    for source, (x, _) in points.items():
        stem = os.path.splitext(os.path.basename(source))[0]
        width, height = int(header(os.path.join(work, source), "width")), int(header(os.path.join(work, source), "height"))
        scaled_width = width * 640 / height
        expected = min(max(x * scaled_width - 320, 0), scaled_width - 640)
        photo = pixels(os.path.join(work, source), 160 / height)
        crop = pixels(os.path.join(out, stem + "-1x1-640.webp"), 0.25)
        left, top, score = window_offset(crop, photo)
        centre = (scaled_width - 640) / 2
        print("%s: the square crop is at x %d of %d (focus %.2f asks %d, the centre is %d; mean difference %.1f)"
              % (stem, left * 4, scaled_width, x, expected, centre, score))
        check(score < 6, "%s: the square crop is no window of the photo (mean difference %.1f)" % (stem, score))
        check(abs(left * 4 - expected) <= 4, "%s: the square crop is at x %d, the focal point asks %d" % (stem, left * 4, expected))


def check_face_banner(work, out):
    """The 480×160 banner against the 320 px photo scaled to 480 px, compared at a quarter."""
    photo = pixels(os.path.join(work, "samples", "people", "astronaut.jpg"), 120 / 320)
    banner = pixels(os.path.join(out, "astronaut-banner.webp"), 0.25)
    _, top, score = window_offset(banner, photo)
    window = (top * 4 / 1.5, (top * 4 + 160) / 1.5)
    print("astronaut: the banner shows rows %d–%d of 320 (the face is %d–%d, a centred crop %d–%d)"
          % (window[0], window[1], FACE_TOP, FACE_BOTTOM, 160 - 160 / 3, 160 + 160 / 3))
    check(score < 8, "astronaut: the banner is no window of the photo (mean difference %.1f)" % score)
    check(window[0] <= FACE_TOP + 3 and FACE_BOTTOM - 3 <= window[1],
          "astronaut: the banner (rows %d–%d) cuts the face (rows %d–%d)" % (window[0], window[1], FACE_TOP, FACE_BOTTOM))


def check_text_place(work, out, margin):
    """Where the watermarked file differs from the same output without text."""
    for stem in ["dune", "storm", "wood"]:
        marked = os.path.join(out, stem + "-credited.jpg")
        plain = os.path.join(out, stem + "-plain.jpg")
        width, height = int(header(marked, "width")), int(header(marked, "height"))
        mask = os.path.join(work, stem + "-mask.v")
        difference_image = os.path.join(work, stem + "-difference.v")
        vips("subtract", marked, plain, difference_image)
        absolute = os.path.join(work, stem + "-absolute.v")
        vips("abs", difference_image, absolute)
        # Blocks without text encode alike; where the text is, it changes pixels by more than
        # JPEG's error around it, even on the light wood.
        vips("relational_const", absolute, mask, "moreeq", "24")
        single = os.path.join(work, stem + "-single.v")
        vips("bandbool", mask, single, "or")
        trim = subprocess.run(["vips", "find_trim", single, "--background", "0", "--threshold", "0"], capture_output=True,
                              text=True, timeout=60, check=True).stdout.split()
        left, top, box_width, box_height = map(int, trim)
        right, bottom = left + box_width, top + box_height
        print("%s: the text is at %d,%d–%d,%d of %d×%d" % (stem, left, top, right, bottom, width, height))
        check(box_width > 0 and box_height > 0, "%s: the text changed no pixel" % stem)
        check(width - margin - 16 <= right <= width - margin + 1 and height - margin - 16 <= bottom <= height - margin + 1,
              "%s: the text ends at %d,%d, not at the south-east margin (%d,%d)" % (stem, right, bottom, width - margin,
                                                                                  height - margin))
        check(left > width / 2 and top > height * 3 / 4, "%s: the text starts at %d,%d, outside the south-east corner"
              % (stem, left, top))


def check_animation(work, out, base):
    gif = os.path.join(work, "samples", "animated", "slideshow.gif")
    avif = os.path.join(out, "slideshow.avif")
    delays = [int(d) for d in header(gif, "delay").split()]
    info = subprocess.run(["avifdec", "--info", avif], capture_output=True, text=True, timeout=60).stdout
    durations = [round(float(d) * 1000) for d in re.findall(r"Decoded frame \[\d+\].*?\[duration ([0-9.]+)", info)]
    print("slideshow.avif: frame durations %s ms, the GIF's delays %s ms" % (durations, delays))
    check(durations == delays, "the AVIF's frames last %s ms, the GIF's %s ms" % (durations, delays))
    if len(durations) != len(delays):
        return

    frames = []
    for index in range(len(delays)):
        png = os.path.join(work, "frame%d.png" % index)
        subprocess.run(["avifdec", "--index", str(index), avif, png], capture_output=True, timeout=60, check=True)
        frames.append(pixels(png, 0.25))
    for index in range(1, len(frames)):
        check(difference(frames[index], frames[index - 1]) > 10, "frames %d and %d of the AVIF are alike" % (index - 1, index))

    with open(os.path.join(out, "play.html"), "w") as f:
        f.write('<!doctype html><body style="margin:0"><img src="slideshow.avif" width="240" height="150"></body>')
    # The frames last 2.4 s together: 6 s of screenshots see each at least twice.
    shown = []
    for _, shot in screenshots(base + "/img/play.html", 240, 150, 6, interval=0.2):
        seen = png_pixels(shot, 0.25)
        scores = [difference(seen, frame) for frame in frames]
        nearest = scores.index(min(scores))
        # Chromium's colour conversion is not avifdec's, so a frame is recognised by being
        # clearly nearer than the others rather than equal.
        clear = min(scores) * 2 < sorted(scores)[1]
        if clear and (not shown or shown[-1] != nearest):
            shown.append(nearest)
    print("Chromium showed the frames in this order: %s" % shown)
    expected = list(range(len(frames)))
    check(any(shown[i:i + len(frames)] == expected for i in range(len(shown))),
          "Chromium did not play the frames in order: it showed %s" % shown)


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="website-check-")
    server = None
    try:
        shutil.copytree(os.path.join(REPO, "Pipelines", "samples"), os.path.join(work, "samples"))
        shutil.copy(os.path.join(REPO, "Pipelines", "focus-points.json"), work)
        with open(os.path.join(REPO, "Pipelines", "website.json")) as f:
            pipeline = json.load(f)
        credited = next(o for o in pipeline["outputs"] if o["name"] == "credited")
        text = next(s["text"] for s in credited["steps"] if "text" in s)
        plain = json.loads(json.dumps(credited))
        plain.update(name="plain", steps=[s for s in credited["steps"] if "text" not in s],
                     path=credited["path"].replace("-credited", "-plain"))
        pipeline["outputs"].append(plain)
        with open(os.path.join(work, "website.json"), "w") as f:
            json.dump(pipeline, f)
        run = subprocess.run([binary, "run", "--quiet", os.path.join(work, "website.json")], capture_output=True, text=True,
                             timeout=600)
        check(run.returncode == 0, "pipeline run exited %d: %s" % (run.returncode, run.stderr))
        out = os.path.join(work, "out", "website")

        check_focus_crops(work, out)
        check_face_banner(work, out)
        check_text_place(work, out, text["margin"])

        root = make_site(binary, os.path.join(out, "images.json"), "samples/green-meadow.jpg", work, check, output="hero")
        server, base = serve(root)
        check_animation(work, out, base)
        check_choices(base, check)
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
    print("website.json: focus and face crops, the text's place, the AVIF's frames playing, and the art chosen")


if __name__ == "__main__":
    main()
