#!/usr/bin/env bash
# Benchmark: many small inputs. COUNT distinct small JPEGs (64x48 by default, each with content
# and bytes of its own, made by Benchmarks/many-inputs.py), and one small thumbnail of each (fit
# inside 32x32, JPEG q80, stripped) made three ways: `pipeline run`, vipsthumbnail (one process
# given many files at a time through xargs, two such processes at once, one per core), and a
# pyvips script written as an expert would (Benchmarks/many-inputs.py thumbnail: two worker
# processes, inputs handed out in chunks). Each runs under Benchmarks/measure.py: wall time,
# images per second and peak memory (summed over the process tree).
#
# usage: Benchmarks/many-inputs.sh [COUNT ...]     (default: 10000 100000)
#
# The inputs are made once per COUNT under $TMPDIR (default /tmp) as pipeline-many-inputs-COUNT
# and kept for the next call (BENCH_FRESH=1 makes them again); outputs go to a temporary folder
# removed at exit unless BENCH_KEEP=1.
#
# Environment: PIPELINE_BIN (use this binary instead of `swift build -c release`), PYTHON
# (default python3), RUNS (alternating runs of each tool, default 1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}
runs=${RUNS:-1}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 100000)
for count in "${counts[@]}"; do
  case $count in '' | *[!0-9]* | 0) echo "many-inputs.sh: COUNT must be a positive whole number" >&2; exit 2 ;; esac
done

# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
use_release_binary "$repo"
command -v vipsthumbnail >/dev/null || { echo "many-inputs.sh: vipsthumbnail not found (apt-get install libvips-tools)" >&2; exit 1; }
"$py" -c 'import pyvips, numpy' 2>/dev/null || { echo "many-inputs.sh: needs pyvips and numpy for $py (pip install pyvips numpy)" >&2; exit 1; }
make_bench_folder pipeline-many-inputs

# The pipeline file: the same thumbnail, every *.jpg in INPUTS, into OUT.
write_job() { # FILE INPUTS OUT
  "$py" - "$@" <<'PY'
import json, sys
dest, inputs, out = sys.argv[1:4]
json.dump({"version": 1, "name": "many-inputs", "inputs": [f"{inputs}/*.jpg"],
           "outputs": [{"name": "thumb", "steps": [{"resize": {"width": 32, "height": 32, "fit": "inside"}}],
                        "encode": {"format": "jpeg", "quality": 80, "strip": True}, "path": f"{out}/{{stem}}-thumb.jpg"}]},
          open(dest, "w"), indent=2)
PY
}

# Prints "wall_s peak_MiB" of one measured run (its figures in $tmp/NAME.json), or fails.
measure() { # NAME CMD...
  local name=$1
  shift
  "$py" "$here/measure.py" --label "$name" --log "$tmp/$name.log" --json "$tmp/$name.json" -- "$@" >/dev/null || {
    echo "many-inputs.sh: $name failed; the end of its output:" >&2
    tail -n 20 "$tmp/$name.log" >&2
    exit 1
  }
  "$py" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["wall_s"], r["peak_rss_mib"])' "$tmp/$name.json"
}

# Checks that OUT holds one thumbnail per input.
check() { # OUT COUNT NAME
  local made
  made=$(find "$1" -name '*-thumb.jpg' | wc -l)
  [ "$made" = "$2" ] || { echo "many-inputs.sh: $3 made $made thumbnails of $2" >&2; exit 1; }
}

printf '%-26s %8s %9s %10s %9s\n' tool inputs "wall s" "images/s" "peak MiB"
for count in "${counts[@]}"; do
  inputs="${TMPDIR:-/tmp}/pipeline-many-inputs-$count"
  if [ "${BENCH_FRESH:-0}" = 1 ]; then rm -rf "$inputs"; fi
  if [ "$(find "$inputs" -maxdepth 1 -name '*.jpg' 2>/dev/null | wc -l)" != "$count" ]; then
    "$py" "$here/many-inputs.py" generate "$inputs" "$count" >&2
  fi
  cat "$inputs"/*.jpg >/dev/null 2>&1 || find "$inputs" -name '*.jpg' -exec cat {} + >/dev/null
  for run in $(seq 1 "$runs"); do
    out="$tmp/pipeline-$count-$run"
    write_job "$tmp/job-$count-$run.json" "$inputs" "$out"
    read -r wall peak < <(measure "pipeline-$count-$run" "$bin" run --quiet "$tmp/job-$count-$run.json")
    check "$out" "$count" pipeline
    printf '%-26s %8d %9.2f %10.0f %9.1f\n' "pipeline run" "$count" "$wall" "$(echo "$count / $wall" | bc -l)" "$peak"

    out="$tmp/vipsthumbnail-$count-$run"
    mkdir -p "$out"
    # Two vipsthumbnail processes at once (one per core), each given up to 1000 files.
    read -r wall peak < <(measure "vipsthumbnail-$count-$run" sh -c \
      'find "$1" -maxdepth 1 -name "*.jpg" -print0 | VIPS_CONCURRENCY=1 xargs -0 -P 2 -n 1000 vipsthumbnail -s 32x32 -o "$2/%s-thumb.jpg[Q=80,strip]"' \
      sh "$inputs" "$out")
    check "$out" "$count" vipsthumbnail
    printf '%-26s %8d %9.2f %10.0f %9.1f\n' "vipsthumbnail (xargs -P 2)" "$count" "$wall" "$(echo "$count / $wall" | bc -l)" "$peak"

    out="$tmp/pyvips-$count-$run"
    read -r wall peak < <(MALLOC_ARENA_MAX=2 measure "pyvips-$count-$run" "$py" "$here/many-inputs.py" thumbnail "$inputs" "$out")
    check "$out" "$count" pyvips
    printf '%-26s %8d %9.2f %10.0f %9.1f\n' "pyvips (2 processes)" "$count" "$wall" "$(echo "$count / $wall" | bc -l)" "$peak"
  done
done
echo "(machine: $(nproc) cores, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), libvips $(pkg-config --modversion vips 2>/dev/null || echo unknown))"
