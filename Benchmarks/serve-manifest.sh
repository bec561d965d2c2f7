#!/usr/bin/env bash
# `pipeline serve` of a file with a large manifest: what a request that makes a file costs, and
# how long requests answered from disk wait meanwhile.
#
# The inputs are COUNT distinct tiny JPEGs (Benchmarks/many-inputs.py, kept under $TMPDIR as
# pipeline-many-inputs-COUNT, as Benchmarks/many-inputs.sh keeps them). A `pipeline run` makes
# one 32 px JPEG of each, with `lqip`, `blurhash` and `dominantColor` in a manifest (141 MB for
# 100,000 inputs), and its journal. Then `pipeline serve` of the same file, and in each round:
#
#   one       one output file deleted and asked for (curl): the seconds to its answer;
#   together  TOGETHER other output files deleted and asked for at once: the seconds to the
#             last answer;
#
# while, beside each, a request for a file on disk goes every 50 ms: the median and the longest
# of their times. Every file asked for is a different input's, and the manifest is checked to
# hold every input afterwards.
#
# The folder with the outputs, the manifest and the journal is kept under $TMPDIR (default
# /tmp) as pipeline-serve-manifest-COUNT for the next call, whose `pipeline run` then finds
# everything up to date (the first one makes 100,000 inputs' outputs for minutes);
# BENCH_FRESH=1 makes it again.
#
# usage: Benchmarks/serve-manifest.sh [--inputs COUNT] [--together K] [--rounds N]
#   --inputs COUNT  inputs (default 100000; 10000 is a quick run)
#   --together K    files asked for at once (default 4)
#   --rounds N      rounds of both (default 2)
#
# Environment: PIPELINE_BIN (use this binary instead of `swift build -c release`), PYTHON
# (default python3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}
usage() { sed -n '23,26s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
positive() { case $2 in '' | *[!0-9]* | 0) echo "serve-manifest.sh: $1 needs a positive whole number" >&2; exit 2 ;; esac; }

count=100000
together=4
rounds=2
while [ $# -gt 0 ]; do
  case $1 in
    --inputs) positive --inputs "${2:-}"; count=$2; shift 2 ;;
    --together) positive --together "${2:-}"; together=$2; shift 2 ;;
    --rounds) positive --rounds "${2:-}"; rounds=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "serve-manifest.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
# Each round asks for 1 + TOGETHER files, and 3 inputs answer from disk beside them.
[ $((rounds * (together + 1) + 3)) -le "$count" ] || { echo "serve-manifest.sh: too few inputs for the rounds" >&2; exit 2; }

# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
use_release_binary "$repo"
command -v curl >/dev/null || { echo "serve-manifest.sh: curl not found" >&2; exit 1; }
"$py" -c 'import pyvips, numpy' 2>/dev/null || { echo "serve-manifest.sh: needs pyvips and numpy for $py (pip install pyvips numpy)" >&2; exit 1; }
tmp=${TMPDIR:-/tmp}/pipeline-serve-manifest-$count
[ "${BENCH_FRESH:-0}" = 1 ] && rm -rf "$tmp"
mkdir -p "$tmp"

inputs=${TMPDIR:-/tmp}/pipeline-many-inputs-$count
echo "== $count inputs in $inputs" >&2
"$py" "$here/many-inputs.py" generate "$inputs" "$count" >&2
"$py" - "$tmp/p.json" "$inputs" <<'PY'
import json, sys
dest, inputs = sys.argv[1:3]
json.dump({"version": 1, "name": "serve-manifest", "inputs": [f"{inputs}/*.jpg"],
           "manifest": {"path": "site/images.json", "urlPrefix": "/img/"},
           "outputs": [{"name": "thumb", "steps": [{"resize": {"width": 32, "height": 32, "fit": "inside"}}],
                        "encode": {"format": "jpeg", "quality": 80, "strip": True}, "path": "out/{stem}.jpg",
                        "placeholders": ["lqip", "blurhash", "dominantColor"]}]},
          open(dest, "w"), indent=2)
PY
echo "== pipeline run (the manifest and the journal)" >&2
"$bin" run --quiet "$tmp/p.json"
echo "== manifest $(du -m "$tmp/site/images.json" | cut -f1) MB" >&2

port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve "$tmp/p.json" --port "$port" > "$tmp/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do grep -q '^Serving' "$tmp/serve.log" && break; sleep 0.1; done
grep -q '^Serving' "$tmp/serve.log" || { echo "serve-manifest.sh: the server did not start" >&2; cat "$tmp/serve.log" >&2; exit 1; }
url=http://127.0.0.1:$port/thumb
name() { printf 'img-%07d.jpg' "$1"; }
# The files answered from disk, asked for once first so that their answers are warm.
for n in 1 2 3; do curl -sf -o /dev/null "$url/$(name "$n")"; done

# warm_beside PID OUT: asks for a file on disk every 50 ms while PID runs (at most 2400 times),
# and writes each request's seconds to OUT.
warm_beside() {
  local pid=$1 out=$2 k=0
  : > "$out"
  while kill -0 "$pid" 2>/dev/null && [ $k -lt 2400 ]; do
    curl -sf -o /dev/null -w '%{time_total}\n' "$url/$(name $((1 + k % 3)))" >> "$out"
    k=$((k + 1))
    sleep 0.05
  done
}
seconds_since() { local ms=$(( ($(date +%s%N) - $1) / 1000000 )); printf '%d.%02d' $((ms / 1000)) $((ms % 1000 / 10)); }
summary() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%d answered from disk beside it: median %.3f s, longest %.3f s", NR, v[int((NR + 1) / 2)], v[NR] }'; }

next=4
printf '%-9s %5s %10s  %s\n' case round seconds "requests for files on disk meanwhile"
for round in $(seq 1 "$rounds"); do
  one=$(name $next); next=$((next + 1))
  rm -f "$tmp/out/$one"
  start=$(date +%s%N)
  curl -sf -o /dev/null "$url/$one" & asked=$!
  warm_beside $asked "$tmp/warm-one"
  wait $asked
  printf '%-9s %5d %10s  %s\n' one "$round" "$(seconds_since "$start")" "$(summary "$tmp/warm-one")"

  names=()
  for _ in $(seq 1 "$together"); do names+=("$(name $next)"); next=$((next + 1)); done
  for n in "${names[@]}"; do rm -f "$tmp/out/$n"; done
  start=$(date +%s%N)
  (for n in "${names[@]}"; do curl -sf -o /dev/null "$url/$n" & done; wait) & asked=$!
  warm_beside $asked "$tmp/warm-together"
  wait $asked
  printf '%-9s %5d %10s  %s\n' together "$round" "$(seconds_since "$start")" "$(summary "$tmp/warm-together")"
done

entries=$("$py" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["inputs"]))' "$tmp/site/images.json")
[ "$entries" = "$count" ] || { echo "serve-manifest.sh: the manifest has $entries entries, not $count" >&2; exit 1; }
echo "(the manifest holds all $entries inputs; $(nproc) cores, $(uname -m))"
