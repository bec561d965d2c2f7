#!/usr/bin/env bash
# Benchmark: a run under a memory limit. Sixteen distinct 12-megapixel JPEGs, each made into a
# full-size rotated PNG and a 2000 px JPEG with all sixteen in flight: together they need far
# more memory than the limit allows. Prints, per limit, the outputs made, wall time and peak
# memory (max RSS), with the runner's admission by memory (the budget from `ulimit -v`) and
# without it (`--max-memory` far above the limit, so nothing waits: the runner before admission).
#
# usage: Benchmarks/memory-limit.sh [LIMIT_KB ...]     (default: 600000 900000)
#
# Each limit is applied as an address-space limit (`ulimit -v`) and, where this shell may make
# a memory cgroup below its own (root in a container, or a delegated group), as that group's
# limit, where the kernel kills a process that goes past it (what a container does).
#
# Environment: PIPELINE_BIN (use this binary instead of `swift build -c release`),
# BENCH_KEEP=1 (keep the temporary folder).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
limits=("$@")
[ ${#limits[@]} -gt 0 ] || limits=(600000 900000)

# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
use_release_binary "$repo"
require_vips_and_time memory-limit.sh
make_bench_folder pipeline-memory
mkdir -p "$tmp/in"
# Distinct files (the runner coalesces repeats): noise, a different brightness each.
vips gaussnoise "$tmp/noise.v" 4000 3000 --mean 128 --sigma 40
vips bandjoin "$tmp/noise.v $tmp/noise.v $tmp/noise.v" "$tmp/rgb.v"
for index in $(seq 0 15); do
  vips linear "$tmp/rgb.v" "$tmp/in/p$index.jpg[Q=85]" 1 "$((index * 4))"
done
rm "$tmp/noise.v" "$tmp/rgb.v"
cat >"$tmp/p.json" <<'JSON'
{"version": 1, "name": "memory-limit", "inputs": ["in/*.jpg"], "inFlight": 16, "incremental": false,
 "decompress": {"concurrency": 2}, "process": {"concurrency": 2}, "encode": {"concurrency": 2}, "outputs": [
  {"name": "full", "steps": [{"rotate": {"angle": 90}}], "encode": {"format": "png", "compression": 1}, "path": "out/{stem}-full.png"},
  {"name": "half", "steps": [{"resize": {"width": 2000}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-half.jpg"}]}
JSON

# A memory cgroup below this shell's (v1, or v2), as a container has, or nothing where none
# can be made here.
cgroup=""
memory_group=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
if [ -n "$memory_group" ] && mkdir "/sys/fs/cgroup/memory$memory_group/pipeline-bench-$$" 2>/dev/null; then
  cgroup="/sys/fs/cgroup/memory$memory_group/pipeline-bench-$$"; cgroup_limit_file=memory.limit_in_bytes
elif v2_group=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup) && [ -n "$v2_group" ] \
    && mkdir "/sys/fs/cgroup$v2_group/pipeline-bench-$$" 2>/dev/null; then
  cgroup="/sys/fs/cgroup$v2_group/pipeline-bench-$$"; cgroup_limit_file=memory.max
fi
[ -n "$cgroup" ] && trap 'rmdir "$cgroup" 2>/dev/null; [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$tmp"' EXIT

# Prints "made/32 wall_s peak_MiB" for one run under the limit: "ulimit" (address space, KB)
# or "cgroup" (the same figure in bytes as the group's limit).
measure() {
  local kind=$1 limit=$2; shift 2
  rm -rf "$tmp/out"
  if [ "$kind" = ulimit ]; then
    (ulimit -v "$limit"; /usr/bin/time -v "$bin" run -q "$@" "$tmp/p.json" >/dev/null 2>"$tmp/time.txt") || true
  else
    echo "$((limit * 1024))" >"$cgroup/$cgroup_limit_file"
    bash -c 'echo $$ >"$0/cgroup.procs" && exec /usr/bin/time -v "$@"' "$cgroup" "$bin" run -q "$@" "$tmp/p.json" >/dev/null 2>"$tmp/time.txt" || true
  fi
  local made wall peak
  made=$(find "$tmp/out" -type f 2>/dev/null | wc -l)
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s }' "$tmp/time.txt")
  peak=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$tmp/time.txt")
  echo "$made/32 $wall $peak"
}

printf '%-22s %-11s %8s %8s %9s\n' "limit" "admission" "made" "wall s" "peak MiB"
kinds=(ulimit)
[ -n "$cgroup" ] && kinds+=(cgroup) || echo "(no memory cgroup can be made here: ulimit -v only)" >&2
for kind in "${kinds[@]}"; do
  for limit in "${limits[@]}"; do
    label="ulimit -v $limit"
    [ "$kind" = cgroup ] && label="cgroup $((limit / 1024)) MiB"
    read -r made wall peak < <(measure "$kind" "$limit")
    printf '%-22s %-11s %8s %8s %9s\n' "$label" "on" "$made" "$wall" "$peak"
    read -r made wall peak < <(measure "$kind" "$limit" --max-memory 1TB)
    printf '%-22s %-11s %8s %8s %9s\n' "$label" "off" "$made" "$wall" "$peak"
  done
done
