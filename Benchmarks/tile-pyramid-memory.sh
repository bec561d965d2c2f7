#!/usr/bin/env bash
# A tile pyramid of a very large image within the memory budget: makes a flat PNG of SIDE×SIDE
# pixels (default 32768: 1.07 gigapixels), runs `pipeline` with one DeepZoom tiles output under
# `--max-memory LIMIT`, and prints the run's estimate for the input (`explain`), the budget, the
# peak resident size (GNU time), the time and the tiles written. `dzsave` streams, so the peak
# is the decoded image (held in memory, as for every output) and little more: the figures
# behind `TileSettings.workingBytes`.
#
# usage: Benchmarks/tile-pyramid-memory.sh [SIDE] [LIMIT]
#
#   SIDE   the image's width and height in pixels (default 32768)
#   LIMIT  the --max-memory given (default 16GB)
#
# Needs the `vips` command (Debian's libvips-tools, which .ci/setup installs), GNU time and a
# built `pipeline` (.build/release, else .build/debug).
set -euo pipefail
side=${1:-32768}
limit=${2:-16GB}
root=$(cd "$(dirname "$0")/.." && pwd)
pipeline=$root/.build/release/pipeline
[ -x "$pipeline" ] || pipeline=$root/.build/debug/pipeline
for tool in vips /usr/bin/time "$pipeline"; do
  command -v "$tool" >/dev/null || { echo "tile-pyramid-memory.sh: needs $tool" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in"
vips black "$work/in/huge.png" "$side" "$side" --bands 3
cat >"$work/p.json" <<JSON
{"version": 1, "inputs": ["in/*.png"], "decompress": {"maxPixels": 2000000000},
 "outputs": [{"name": "zoom", "tiles": {"layout": "dz"}, "path": "out/{stem}.dzi"}]}
JSON
cd "$work"
"$pipeline" explain --max-memory "$limit" p.json | grep -E "memory budget:"
/usr/bin/time -f "peak resident: %M KiB, elapsed: %e s" "$pipeline" run --quiet --max-memory "$limit" p.json
echo "decoded image: $((side * side * 3 / 1024)) KiB (3 bytes a pixel)"
echo "tiles written: $(find out/huge_files -type f | wc -l)"
