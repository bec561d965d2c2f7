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
python3 "$root/Benchmarks/moving-box-gif.py" "$work/small.gif" "$frames" 64 64
python3 "$root/Benchmarks/moving-box-gif.py" "$work/large.gif" "$frames" 200 150
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
