#!/usr/bin/env bash
# Animated GIFs resized, against libvips' own `vips thumbnail`: makes two GIFs of FRAMES frames
# (64×64 and 200×150, each frame different), then, for each, runs `pipeline` with one GIF output
# 32 (or 64) pixels wide and `vips thumbnail` to the same width, and prints each one's CPU and
# wall time (GNU time). CPU time is the figure to compare: wall time on a busy machine is mostly
# waiting for a core.
#
# usage: Benchmarks/animation.sh [FRAMES]
#
# Needs pyvips (to make the GIFs), the `vips` command (Debian's libvips-tools), GNU time and a
# built `pipeline` ($PIPELINE_BIN, else .build/release, else .build/debug).
set -euo pipefail
frames=${1:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
pipeline=${PIPELINE_BIN:-$root/.build/release/pipeline}
[ -x "$pipeline" ] || pipeline=$root/.build/debug/pipeline
for tool in vips /usr/bin/time python3 "$pipeline"; do
  command -v "$tool" >/dev/null || { echo "animation.sh: needs $tool" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$frames" <<'PY'
import sys, pyvips
work, count = sys.argv[1], int(sys.argv[2])
for name, (w, h) in {"small": (64, 64), "large": (200, 150)}.items():
    frames = []
    for i in range(count):
        frame = pyvips.Image.black(w, h, bands=3) + [(i * 7) % 255, (i * 13) % 255, (i * 29) % 255]
        frame = frame.draw_rect([255, 255, 255], (i * 3) % (w - 20), (i * 5) % (h - 20), 20, 20, fill=True)
        frames.append(frame.cast("uchar"))
    strip = pyvips.Image.arrayjoin(frames, across=1).copy()
    strip.set_type(pyvips.GValue.gint_type, "page-height", h)
    strip.set_type(pyvips.GValue.array_int_type, "delay", [40] * count)
    strip.set_type(pyvips.GValue.gint_type, "loop", 0)
    strip.gifsave(f"{work}/{name}.gif")
PY
cd "$work"
for case in "small 32" "large 64"; do
  set -- $case
  cat >"$1.json" <<JSON
{"version": 1, "inputs": ["$1.gif"], "outputs": [
 {"name": "g", "steps": [{"resize": {"width": $2}}], "encode": {"format": "gif"}, "path": "out/{stem}.gif"}]}
JSON
  /usr/bin/time -f "$1 ($frames frames) to $2 px, pipeline:       %U s user, %S s system, %e s wall" \
    "$pipeline" run --quiet --force "$1.json"
  /usr/bin/time -f "$1 ($frames frames) to $2 px, vips thumbnail: %U s user, %S s system, %e s wall" \
    vips thumbnail "$1.gif[n=-1]" "$1-vips.gif" "$2"
done
