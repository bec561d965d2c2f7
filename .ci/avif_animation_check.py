#!/usr/bin/env python3
"""Checks that headless Chromium plays an animated AVIF that pipeline wrote (run by
.ci/browser-checks.sh).

Makes an animated GIF of three frames (reddish for 0.2 s, greenish for 0.3 s, bluish for 0.5 s) with
libvips, runs `pipeline run` on it with an `avif` output, serves the AVIF on loopback with
Python's http.server, and loads a page in headless Chromium that decodes the file with
Chromium's own image decoder (WebCodecs `ImageDecoder`, the decoder <img> uses): whether it is
animated, the frame count, each frame's duration and the colour of every frame, drawn on a canvas.

Then it checks that an <img> plays it: screenshots of a page showing the AVIF, taken in real time
through the DevTools protocol (.ci/browser.py says why not a canvas or --screenshot), show the
three in that order.

    python3 .ci/avif_animation_check.py PIPELINE_BINARY

Every wait is bounded: the server's start (10 s), each Chromium load (60 s, three tries), the
screenshots (3 s), each read of Chromium's answers (30 s).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import check, failures, page_result, screenshots, serve, stop  # noqa: E402
from images import mean_colour, png_pixels  # noqa: E402

# Tones between the extremes: a range misread (full-range YUV shown as limited, with its
# contrast stretched) moves each by 8 levels or more, past the tolerance of the frames' check.
COLOURS = [(200, 64, 64), (64, 192, 64), (64, 64, 200)]
DELAYS = [200, 300, 500]

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"></head><body>
<pre id="result">pending</pre>
<script>
function pixel(source) {
  const canvas = document.createElement('canvas');
  canvas.width = 40; canvas.height = 30;
  const context = canvas.getContext('2d', {willReadFrequently: true});
  context.drawImage(source, 0, 0, 40, 30);
  return Array.from(context.getImageData(20, 15, 1, 1).data.slice(0, 3));
}
async function report() {
  const result = {frames: []};
  try {
    const data = await (await fetch('anim.avif')).arrayBuffer();
    const decoder = new ImageDecoder({data: data, type: 'image/avif'});
    await decoder.tracks.ready;
    result.animated = decoder.tracks.selectedTrack.animated;
    result.frameCount = decoder.tracks.selectedTrack.frameCount;
    for (let index = 0; index < result.frameCount; index++) {
      const frame = (await decoder.decode({frameIndex: index})).image;
      result.frames.push({duration: frame.duration, colour: pixel(frame)});
      frame.close();
    }
  } catch (e) {
    result.error = String(e);
  }
  document.getElementById('result').textContent = JSON.stringify(result);
}
report();
</script>
</body></html>
"""


def close(a, b, tolerance=40):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="avif-animation-check-")
    server = None
    try:
        os.makedirs(os.path.join(work, "in"))
        frames = []
        for index, colour in enumerate(COLOURS):
            black = os.path.join(work, "black%d.v" % index)
            frame = os.path.join(work, "frame%d.v" % index)
            subprocess.run(["vips", "black", black, "40", "30", "--bands", "3"], check=True, timeout=60)
            subprocess.run(["vips", "linear", black, frame, "1 1 1", " ".join(map(str, colour)), "--uchar"],
                           check=True, timeout=60)
            frames.append(frame)
        stacked = frames[0]
        for index, frame in enumerate(frames[1:]):
            joined = os.path.join(work, "joined%d.v" % index)
            subprocess.run(["vips", "join", stacked, frame, joined, "vertical"], check=True, timeout=60)
            stacked = joined
        gif = os.path.join(work, "in", "anim.gif")
        subprocess.run(["vips", "copy", stacked, gif + "[page-height=30]"], check=True, timeout=60)
        # libvips' GIF saver takes the delays from the image: set them with a pipeline GIF
        # output would need a step, so they are written into the file's graphic control blocks.
        data = bytearray(open(gif, "rb").read())
        blocks = [m.start() for m in re.finditer(rb"\x21\xf9\x04", bytes(data))]
        check(len(blocks) == 3, "the GIF has %d graphic control blocks, expected 3" % len(blocks))
        for at, delay in zip(blocks, DELAYS):
            data[at + 4:at + 6] = (delay // 10).to_bytes(2, "little")
        open(gif, "wb").write(bytes(data))

        with open(os.path.join(work, "anim.json"), "w") as f:
            json.dump({"version": 1, "name": "anim", "inputs": ["in/*"],
                       "outputs": [{"name": "a", "encode": {"format": "avif", "quality": 80}, "path": "site/{stem}.avif"}]}, f)
        run = subprocess.run([binary, "run", "--quiet", os.path.join(work, "anim.json")],
                             capture_output=True, text=True, timeout=300)
        check(run.returncode == 0, "pipeline run exited %d: %s" % (run.returncode, run.stderr))
        root = os.path.join(work, "site")
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write(PAGE)

        server, base = serve(root)
        result, why = page_result(base + "/index.html", 400)
        if result is None:
            check(False, "the page reported nothing: %s" % why)
        else:
            print("Chromium: %s" % json.dumps(result))
            check("error" not in result, "Chromium's ImageDecoder failed: %s" % result.get("error"))
            check(result.get("animated") is True, "Chromium does not take the AVIF as animated")
            check(result.get("frameCount") == 3, "Chromium decodes %s frames, expected 3" % result.get("frameCount"))
            for index, (frame, colour, delay) in enumerate(zip(result["frames"], COLOURS, DELAYS)):
                check(close(frame["colour"], colour, tolerance=6), "frame %d is %s, expected %s" % (index, frame["colour"], colour))
                # VideoFrame durations are in microseconds.
                check(frame["duration"] == delay * 1000, "frame %d lasts %s µs, expected %d" % (index, frame["duration"], delay * 1000))
        # The three frames last 1 s together: 3 s of screenshots see each of them twice or more.
        with open(os.path.join(root, "play.html"), "w") as f:
            f.write('<!doctype html><body style="margin:0"><img src="anim.avif" width="40" height="30"></body>')
        shown = []
        for _, shot in screenshots(base + "/play.html", 40, 30, 3, interval=0.1):
            colour = mean_colour(png_pixels(shot))
            nearest = [index for index, expected in enumerate(COLOURS) if close(colour, expected)]
            if nearest and (not shown or shown[-1] != nearest[0]):
                shown.append(nearest[0])
        print("an <img> of it showed the frames in this order: %s" % shown)
        check(any(shown[i:i + 3] == [0, 1, 2] for i in range(len(shown))),
              "an <img> did not play the three frames in order: it showed %s" % shown)
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
    print("animated AVIF in Chromium: animated, three frames with their durations and colours, played in an <img>")


if __name__ == "__main__":
    main()
