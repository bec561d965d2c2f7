#!/usr/bin/env bash
# Benchmark: one input with many outputs, to show that the work per run grows linearly with
# the number of outputs (planning, fingerprints, the journal), for a first run and for an
# all-up-to-date re-run.
#
# usage: Benchmarks/many-outputs.sh [COUNT ...]     (default: 1000 4000)
#
# For each COUNT it writes a pipeline file with COUNT outputs of one 64x64 JPEG (each a small
# resize to its own JPEG), runs it twice under /usr/bin/time -v (the first run makes every
# output, the second finds them all up to date) and prints wall time and peak memory (max RSS).
#
# Environment: PIPELINE_BIN (use this binary instead of `swift build -c release`),
# BENCH_KEEP=1 (keep the temporary folder).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1000 4000)

# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
use_release_binary "$repo"
require_vips_and_time many-outputs.sh
make_bench_folder pipeline-many
mkdir -p "$tmp/in"
vips gaussnoise "$tmp/in/noise.v" 64 64
vips copy "$tmp/in/noise.v" "$tmp/in/a.jpg"
rm "$tmp/in/noise.v"

# Prints "wall_s peak_MiB" for one run of the binary.
measure() {
  /usr/bin/time -v "$bin" run -q "$1" 2>"$tmp/time.txt" >/dev/null || { cat "$tmp/time.txt" >&2; exit 1; }
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; wall = s }
              /Maximum resident set size/ { rss = $2 / 1024 }
              END { printf "%.2f %.0f\n", wall, rss }' "$tmp/time.txt"
}

printf '%-8s %12s %10s %14s %10s\n' outputs "first s" "first MiB" "re-run s" "re-run MiB"
for count in "${counts[@]}"; do
  dir="$tmp/$count"
  mkdir -p "$dir"
  ln -s "$tmp/in" "$dir/in"
  {
    printf '{"version": 1, "name": "many", "inputs": ["in/a.jpg"], "cache": {"directory": ".cache"}, "outputs": [\n'
    for ((i = 0; i < count; i++)); do
      [ "$i" -gt 0 ] && printf ',\n'
      printf '{"name": "o%d", "steps": [{"resize": {"width": %d}}], "encode": {"format": "jpeg", "quality": 80}, "path": "out/{stem}-{output}.jpg"}' \
        "$i" $((8 + i % 32))
    done
    printf '\n]}\n'
  } >"$dir/pipeline.json"
  read -r first_s first_m < <(measure "$dir/pipeline.json")
  read -r again_s again_m < <(measure "$dir/pipeline.json")
  printf '%-8s %12s %10s %14s %10s\n' "$count" "$first_s" "$first_m" "$again_s" "$again_m"
done
