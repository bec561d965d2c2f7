#!/usr/bin/env bash
# Benchmark: many small inputs. COUNT distinct small JPEGs (64x48 by default, each with content
# and bytes of its own, made by Benchmarks/many-inputs.py), each made into the standard job's
# outputs three ways, and measured under Benchmarks/measure.py (wall time, images per second,
# peak memory summed over the process tree, and the average RSS by quarter of the run):
#
#   pipeline       `pipeline run --quiet` on the standard job (Benchmarks/common.sh:
#                  a 320x320 WebP cover crop, a 1280 px JPEG never enlarged, a blurred 32 px
#                  JPEG placeholder), as Benchmarks/run.sh writes it;
#   pyvips         Benchmarks/reference.py, the expert's script for the same job (two worker
#                  processes, one libvips thread each, MALLOC_ARENA_MAX=2);
#   vipsthumbnail  three passes (one per output; it cannot blur, so the placeholder is not
#                  blurred), each one process given up to 1000 files, two at once (xargs -P 2).
#
# With `--job thumb`, the earlier, smaller job instead: one thumbnail of each input, fit inside
# 32x32, JPEG q80, stripped (pyvips: many-inputs.py thumbnail; vipsthumbnail: one pass).
#
# usage: Benchmarks/many-inputs.sh [--count N]... [--job standard|thumb] [--runs N]
#                                  [--timeout S] [--tools LIST] [COUNT ...]
#
#   --count N    inputs (repeatable; a bare COUNT is the same). Default: 1000 (a quick run);
#                100000 is the full one.
#   --runs N     alternating runs of each tool (default 1).
#   --timeout S  each measured run is stopped after S seconds, and the benchmark fails
#                (default 7200).
#   --tools LIST pipeline, pyvips, vipsthumbnail, comma-separated (default: all three).
#
# The inputs are made once per COUNT under $TMPDIR (default /tmp) as pipeline-many-inputs-COUNT
# and kept for the next call (BENCH_FRESH=1 makes them again); outputs go to a temporary folder
# removed at exit unless BENCH_KEEP=1.
#
# Environment: PIPELINE_BIN (use this binary instead of `swift build -c release`), PYTHON
# (default python3), PIPELINE_ARGS (more arguments for `pipeline run`, e.g. --journal FILE).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}

usage() { sed -n '18,27s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
positive() { case $2 in '' | *[!0-9]* | 0) echo "many-inputs.sh: $1 needs a positive whole number" >&2; exit 2 ;; esac; }

counts=()
job=standard
runs=1
limit=7200
tools=pipeline,pyvips,vipsthumbnail
while [ $# -gt 0 ]; do
  case $1 in
    --count) positive --count "${2:-}"; counts+=("$2"); shift 2 ;;
    --runs) positive --runs "${2:-}"; runs=$2; shift 2 ;;
    --timeout) positive --timeout "${2:-}"; limit=$2; shift 2 ;;
    --job)
      case ${2:-} in standard | thumb) job=$2 ;; *) echo "many-inputs.sh: --job takes standard or thumb" >&2; exit 2 ;; esac
      shift 2 ;;
    --tools) tools=${2:-}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "many-inputs.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) positive COUNT "$1"; counts+=("$1"); shift ;;
  esac
done
[ ${#counts[@]} -gt 0 ] || counts=(1000)
wants() { case ",$tools," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
if wants pipeline; then use_release_binary "$repo"; fi
command -v vipsthumbnail >/dev/null || { echo "many-inputs.sh: vipsthumbnail not found (apt-get install libvips-tools)" >&2; exit 1; }
"$py" -c 'import pyvips, numpy' 2>/dev/null || { echo "many-inputs.sh: needs pyvips and numpy for $py (pip install pyvips numpy)" >&2; exit 1; }
make_bench_folder pipeline-many-inputs

# The thumb job's pipeline file: every *.jpg in INPUTS, into OUT.
write_thumb_job() { # FILE INPUTS OUT
  "$py" - "$@" <<'PY'
import json, sys
dest, inputs, out = sys.argv[1:4]
json.dump({"version": 1, "name": "many-inputs", "inputs": [f"{inputs}/*.jpg"],
           "outputs": [{"name": "thumb", "steps": [{"resize": {"width": 32, "height": 32, "fit": "inside"}}],
                        "encode": {"format": "jpeg", "quality": 80, "strip": True}, "path": f"{out}/{{stem}}-thumb.jpg"}]},
          open(dest, "w"), indent=2)
PY
}

# Prints "wall_s cpu_s peak_MiB q1/q2/q3/q4" of one measured run (its figures in $tmp/NAME.json), or fails.
measure() { # NAME CMD...
  local name=$1
  shift
  timeout "$limit" "$py" "$here/measure.py" --label "$name" --log "$tmp/$name.log" --json "$tmp/$name.json" -- "$@" >/dev/null || {
    echo "many-inputs.sh: $name failed or ran over ${limit} s; the end of its output:" >&2
    tail -n 20 "$tmp/$name.log" >&2
    exit 1
  }
  "$py" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["wall_s"], r["cpu_s"], r["peak_rss_mib"], "/".join("%.0f" % q for q in r["quarter_avg_rss_mib"]))' "$tmp/$name.json"
}

# Checks that OUT holds WANT files.
check() { # OUT WANT NAME
  local made
  made=$(find "$1" -type f | wc -l)
  [ "$made" = "$2" ] || { echo "many-inputs.sh: $3 made $made files of $2" >&2; exit 1; }
}

row() { # TOOL COUNT WALL CPU PEAK QUARTERS
  printf '%-28s %8d %9.2f %8.2f %10.0f %9.1f  %s\n' "$1" "$2" "$3" "$4" "$(echo "$2 / $3" | bc -l)" "$5" "$6"
}

echo "== job: $job; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %8s %9s %8s %10s %9s  %s\n' tool inputs "wall s" "CPU s" "images/s" "peak MiB" "RSS by quarter MiB"
for count in "${counts[@]}"; do
  inputs="${TMPDIR:-/tmp}/pipeline-many-inputs-$count"
  if [ "${BENCH_FRESH:-0}" = 1 ]; then rm -rf "$inputs"; fi
  if [ "$(find "$inputs" -maxdepth 1 -name '*.jpg' 2>/dev/null | wc -l)" != "$count" ]; then
    timeout "$limit" "$py" "$here/many-inputs.py" generate "$inputs" "$count" >&2
  fi
  find "$inputs" -name '*.jpg' -exec cat {} + >/dev/null  # warm the page cache
  if [ "$job" = standard ]; then per=3; else per=1; fi
  for run in $(seq 1 "$runs"); do
    if wants pipeline; then
      out="$tmp/pipeline-$count-$run"
      if [ "$job" = standard ]; then
        write_standard_job "$tmp/job-$count-$run.json" "$inputs" "$out"
      else
        write_thumb_job "$tmp/job-$count-$run.json" "$inputs" "$out"
      fi
      # shellcheck disable=SC2086 # PIPELINE_ARGS is a list of arguments
      read -r wall cpu peak quarters < <(measure "pipeline-$count-$run" "$bin" run --quiet ${PIPELINE_ARGS:-} "$tmp/job-$count-$run.json")
      check "$out" $((count * per)) pipeline
      row "pipeline run" "$count" "$wall" "$cpu" "$peak" "$quarters"
      rm -rf "$out"
    fi

    if wants vipsthumbnail; then
      out="$tmp/vipsthumbnail-$count-$run"
      mkdir -p "$out"
      if [ "$job" = standard ]; then
        # shellcheck disable=SC2016 # expanded by the inner shell
        passes='vipsthumbnail -s "1280x1280>" -o "$0/%s-jpg-large.jpg[Q=85,strip]" "$@" &&
          vipsthumbnail -s 320x320 -m centre -o "$0/%s-jpg-small.webp[Q=80]" "$@" &&
          vipsthumbnail -s 32x -o "$0/%s-jpg-placeholder.jpg[Q=60,strip]" "$@"'
        label="vipsthumbnail (3 passes)"
      else
        # shellcheck disable=SC2016 # expanded by the inner shell
        passes='vipsthumbnail -s 32x32 -o "$0/%s-thumb.jpg[Q=80,strip]" "$@"'
        label="vipsthumbnail (xargs -P 2)"
      fi
      read -r wall cpu peak quarters < <(measure "vipsthumbnail-$count-$run" sh -c \
        'find "$1" -maxdepth 1 -name "*.jpg" -print0 | VIPS_CONCURRENCY=1 xargs -0 -P 2 -n 1000 sh -c "$3" "$2"' \
        sh "$inputs" "$out" "$passes")
      check "$out" $((count * per)) vipsthumbnail
      row "$label" "$count" "$wall" "$cpu" "$peak" "$quarters"
      rm -rf "$out"
    fi

    if wants pyvips; then
      out="$tmp/pyvips-$count-$run"
      if [ "$job" = standard ]; then
        read -r wall cpu peak quarters < <(MALLOC_ARENA_MAX=2 measure "pyvips-$count-$run" "$py" "$here/reference.py" "$inputs" "$out")
        label="pyvips (reference.py)"
      else
        read -r wall cpu peak quarters < <(MALLOC_ARENA_MAX=2 measure "pyvips-$count-$run" "$py" "$here/many-inputs.py" thumbnail "$inputs" "$out")
        label="pyvips (2 processes)"
      fi
      check "$out" $((count * per)) pyvips
      row "$label" "$count" "$wall" "$cpu" "$peak" "$quarters"
      rm -rf "$out"
    fi
  done
done
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(machine: $(nproc) cores, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), libvips $(pkg-config --modversion vips 2>/dev/null || echo unknown))"
