#!/usr/bin/env bash
# An animated GIF of many frames made into an animated GIF and an animated WebP at its own size,
# against libvips' own `vips copy` of it to each: the cost an animation may take is in
# proportion to its frames, and pipeline's should stay within twice libvips' for the same job.
# Makes a GIF of FRAMES frames of WIDTH×HEIGHT random pixels (Benchmarks/noise-gif.py), runs
# `pipeline run` with the two outputs, then `vips copy 'in.gif[n=-1]' out.webp` and `vips copy
# 'in.gif[n=-1]' out.gif`, and prints each one's CPU time, wall time and peak memory (GNU time),
# and each output's frame count. CPU time is the figure to compare on a shared machine.
#
# usage: Benchmarks/animated-gif-cost.sh [FRAMES [WIDTH [HEIGHT]]]   (default 999 150 150)
#
# Needs python3, the `vips` command (Debian's libvips-tools), GNU time and a release `pipeline`
# ($PIPELINE_BIN, else built here).
set -euo pipefail
frames=${1:-999}
width=${2:-150}
height=${3:-150}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/Benchmarks/common.sh"
require_vips_and_time animated-gif-cost.sh
use_release_binary "$root"
make_bench_folder animated-gif-cost
cd "$tmp"
python3 "$root/Benchmarks/noise-gif.py" in.gif "$frames" "$width" "$height"
echo "input: $(vipsheader -f n-pages in.gif) frames of ${width}×${height}, $(stat -c %s in.gif) bytes"
cat >pipeline.json <<JSON
{"version": 1, "inputs": ["in.gif"], "outputs": [
 {"name": "gif", "encode": {"format": "gif"}, "path": "out/{stem}.gif"},
 {"name": "webp", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}
JSON
format='%U s user, %S s system, %e s wall, %M KB peak'
/usr/bin/time -f "pipeline run (GIF and WebP):   $format" "$bin" run --quiet --force pipeline.json
/usr/bin/time -f "vips copy to WebP:             $format" vips copy 'in.gif[n=-1]' vips.webp
/usr/bin/time -f "vips copy to GIF:              $format" vips copy 'in.gif[n=-1]' vips.gif
for file in out/in.gif out/in.webp vips.gif vips.webp; do
  echo "$file: $(vipsheader -f n-pages "$file") frames, $(stat -c %s "$file") bytes"
done
