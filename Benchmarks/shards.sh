#!/usr/bin/env bash
# Benchmark: the standard job (as Benchmarks/run.sh: per input a 320x320 WebP cover crop, a
# 1280 px JPEG and a 32 px blurred JPEG placeholder) split into 1, 2 and 4 shards on this one
# machine: the shards run side by side as separate processes (`pipeline run --shard i/N`), as
# GNU parallel or a scheduler on one host would run them. Same inputs, same binary, no cache and
# no incremental skipping, so every run reads every input and writes every output.
#
# usage: Benchmarks/shards.sh [CORPUS_DIR] [--runs N] [--shards "1 2 4"]
#
# Environment: PIPELINE_CORPUS, PIPELINE_BIN (else a release build), PYTHON (default python3).
# Prints, per shard count, the run with the median wall time of N runs (default 3): its wall
# time, its CPU time and the peak of the shards' resident memory summed (Benchmarks/measure.py
# samples the whole process tree), with the machine's cores and load average.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}
runs=3 corpus="" counts="1 2 4"
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --shards) counts=$2; shift 2 ;;
    -*) echo "shards.sh: unknown option $1" >&2; exit 2 ;;
    *) corpus=$1; shift ;;
  esac
done
# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
find_corpus_images shards.sh "$corpus"
use_release_binary "$repo"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
write_standard_job "$tmp/standard.json" "$corpus" "$tmp/out"

# All shards of one run, side by side; fails when any shard fails.
cat > "$tmp/shards.sh" <<'SH'
set -euo pipefail
bin=$1 file=$2 count=$3 pids=()
for i in $(seq 0 $((count - 1))); do "$bin" run --quiet "$file" --shard "$i/$count" & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid"; done
SH

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
  for count in $counts; do  # alternating, so a change in the machine's load spreads over all
    rm -rf "$tmp/out"
    "$py" "$here/measure.py" --label "$count shards #$run" --log "$tmp/$count-$run.log" --json "$tmp/$count-$run.json" -- \
      bash "$tmp/shards.sh" "$bin" "$tmp/standard.json" "$count" >/dev/null \
      || { cat "$tmp/$count-$run.log" >&2; echo "shards.sh: $count shards failed" >&2; exit 1; }
    made=$(find "$tmp/out" -type f | wc -l)
    [ "$made" = $(( ${#images[@]} * 3 )) ] || { echo "shards.sh: $count shards made $made files, not $(( ${#images[@]} * 3 ))" >&2; exit 1; }
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| shards | inputs | wall (median of %s) | CPU | peak memory (shards summed, highest run) |\n| ---: | ---: | ---: | ---: | ---: |\n' "$runs"
for count in $counts; do
  "$py" - "$count" "${#images[@]}" "$tmp/$count-"*.json <<'PY'
import json, sys
count, inputs, runs = sys.argv[1], sys.argv[2], sorted((json.load(open(p)) for p in sys.argv[3:]), key=lambda r: r["wall_s"])
median = runs[(len(runs) - 1) // 2]
print(f"| {count} | {inputs} | {median['wall_s']:.1f} s | {median['cpu_s']:.1f} s | {max(r['peak_rss_mib'] for r in runs):.0f} MiB |")
PY
done
# With few inputs the shards are uneven, and the run waits for the largest: say how they fell.
for count in $counts; do
  sizes=()
  for i in $(seq 0 $((count - 1))); do
    sizes+=("$("$bin" explain "$tmp/standard.json" --shard "$i/$count" | sed -n '1s/.*: \([0-9]*\) of .*/\1/p')")
  done
  echo "$count shards: ${sizes[*]} inputs"
done
