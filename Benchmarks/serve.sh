#!/usr/bin/env bash
# `pipeline serve` against thumbor 7 on the same requests: a 320x320 WebP, cropped to fill, of
# each photograph of a corpus folder (thumbor's `/unsafe/320x320/filters:format(webp)/NAME`, and
# an output of a pipeline file doing the same), both at quality 80, both keeping what they make
# in files (thumbor's file result storage; the pipeline's output folder and journal).
#
# Each round starts both servers afresh, one tool after the other, on loopback:
# - cold: every image asked for once, 4 at a time (xargs -P4 curl); the wall time, each request's
#   latency (the median and the 99th percentile of the round), and the peak memory: the sum of
#   the server processes' RSS high-water marks (VmHWM, which counts pages shared between
#   processes in each);
# - warm: wrk at fixed connections and duration over the same URLs (a Lua script cycling the
#   paths), all answered from the files the cold pass made: requests per second.
#
# thumbor runs as two processes (`--processes 2`, one per core) from a virtualenv this script
# makes in the benchmark cache (`pip install 'thumbor>=7,<8'`), with the file loader, no
# storage of originals, and the file result storage. `pipeline serve` is the release build
# ($PIPELINE_BIN, else `swift build -c release`).
#
# With --soak MINUTES, only `pipeline serve` runs, over 200 distinct inputs (hard links to the
# corpus' files, r1-NAME, r2-NAME, …, so none is coalesced with another): wrk at 32 connections
# for MINUTES, cycling the 200 paths, the first pass cold, while the server's RSS is sampled every
# 5 s. Prints the RSS after the first minute, the highest and the last after it, how far the
# highest is above the first, and every answer other than 200 or socket error wrk counted.
#
# With --responsive, the pipeline file also declares a second output that no request asks for:
# a responsive set of 640 and 1280 px in AVIF and WebP (`/set/NAME`). A request makes only the
# file it names, so the cold pass should cost about what it costs without it.
#
# usage: Benchmarks/serve.sh [CORPUS] [--rounds N] [--connections C] [--duration SECONDS] [--soak MINUTES] [--responsive]
#   CORPUS: a folder of JPEG, PNG and WebP photographs (../shared/corpus/fetch-corpus.sh DIR
#   fetches some); default $PIPELINE_CORPUS, else the benchmark cache's corpus.
#   Needs curl, wrk (apt-get install wrk) and python3 with venv. BENCH_KEEP=1 keeps the folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"

rounds=2
connections=16
duration=15
corpus_arg=""
soak=""
responsive=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --soak) soak=$2; shift 2 ;;
    --responsive) responsive=1; shift ;;
    -h | --help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) echo "serve.sh: unknown option $1" >&2; exit 2 ;;
    *) corpus_arg=$1; shift ;;
  esac
done

for tool in curl wrk python3; do
  command -v "$tool" >/dev/null || { echo "serve.sh: $tool not found" >&2; exit 1; }
done
find_corpus_images serve.sh "$corpus_arg"
corpus=$(cd "$corpus" && pwd)
use_release_binary "$repo"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/pipeline-bench
venv=$cache/thumbor-venv
if [ -z "$soak" ] && [ ! -x "$venv/bin/thumbor" ]; then
  echo "== pip install thumbor into $venv" >&2
  mkdir -p "$cache"
  python3 -m venv "$venv"
  timeout 1200 "$venv/bin/pip" install -q 'thumbor>=7,<8' >&2
fi
[ -n "$soak" ] || thumbor_version=$("$venv/bin/python" -c 'import thumbor; print(thumbor.__version__)')

make_bench_folder pipeline-serve
servers=()
stop_servers() {
  local pid
  for pid in "${servers[@]}"; do
    # Each server leads its own process group (setsid): thumbor's workers go with it.
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  for pid in "${servers[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  servers=()
}
cleanup() {
  stop_servers
  if [ "${BENCH_KEEP:-0}" != 1 ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The paths asked for, one per image, in the corpus' order.
names=()
for image in "${images[@]}"; do names+=("$(basename "$image")"); done
printf '/small/%s\n' "${names[@]}" >"$tmp/pipeline.paths"
printf '/unsafe/320x320/filters:format(webp)/%s\n' "${names[@]}" >"$tmp/thumbor.paths"

cat >"$tmp/cycle.lua" <<'LUA'
-- Cycles through the paths of the file WRK_PATHS, each thread from its own place.
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do paths[#paths + 1] = line end
local next = math.random(#paths)
request = function()
  next = next % #paths + 1
  return wrk.format("GET", paths[next])
end
LUA

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (at most 60 s) until URL answers 200.
wait_ready() {
  local url=$1 pid=$2
  for _ in $(seq 600); do
    curl -sf -o /dev/null --max-time 2 "$url" && return 0
    kill -0 "$pid" 2>/dev/null || { echo "serve.sh: the server ($pid) ended before answering $url" >&2; return 1; }
    sleep 0.1
  done
  echo "serve.sh: $url did not answer within 60 s" >&2
  return 1
}

# The sum of VmHWM (KiB) of the processes in process group PGID.
peak_kib() {
  local total=0 pid hwm
  for pid in $(ps -o pid= -g "$1"); do
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    total=$((total + ${hwm:-0}))
  done
  echo "$total"
}

# Starts TOOL's server in a fresh folder; sets `port` and `pid`.
start_server() {
  local tool=$1 round=$2 dir=$tmp/$1-$2
  mkdir -p "$dir"
  port=$(free_port)
  if [ "$tool" = pipeline ]; then
    python3 - "$dir/serve.json" "$corpus" "$dir/out" "$responsive" <<'PY'
import json, sys
dest, source, target, responsive = sys.argv[1:5]
outputs = [{"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}],
            "encode": {"format": "webp", "quality": 80}, "path": f"{target}/{{name}}.webp"}]
if responsive:
    outputs.append({"name": "set", "widths": [640, 1280], "formats": ["avif", "webp"],
                    "path": f"{target}/set/{{stem}}-{{width}}.{{format}}"})
json.dump({"version": 1, "name": "serve-bench",
           "inputs": [f"{source}/*.{ext}" for ext in ("jpg", "jpeg", "png", "webp")],
           "outputs": outputs}, open(dest, "w"), indent=2)
PY
    setsid "$bin" serve "$dir/serve.json" --host 127.0.0.1 --port "$port" >"$dir/server.log" 2>&1 &
    pid=$!
    servers+=("$pid")
    wait_ready "http://127.0.0.1:$port/healthz" "$pid"
  else
    cat >"$dir/thumbor.conf" <<CONF
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = '$corpus'
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = 'thumbor.result_storages.file_storage'
RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '$dir/results'
RESULT_STORAGE_STORES_UNSAFE = True
ALLOW_UNSAFE_URL = True
QUALITY = 80
WEBP_QUALITY = 80
AUTO_WEBP = False
CONF
    setsid "$venv/bin/thumbor" --ip=127.0.0.1 --port="$port" --conf="$dir/thumbor.conf" --processes=2 \
      --log-level=warning >"$dir/server.log" 2>&1 &
    pid=$!
    servers+=("$pid")
    wait_ready "http://127.0.0.1:$port/healthcheck" "$pid"
  fi
}

rows=()
# One round of TOOL: cold pass, peak memory, warm pass; appends "tool round cold_s peak_mib rps".
measure() {
  local tool=$1 round=$2 start end failed rps peak latencies
  start_server "$tool" "$round"
  start=$(date +%s.%N)
  timeout 1800 xargs -P4 -I{} sh -c 'curl -s -o /dev/null --max-time 300 -w "%{http_code} %{time_total}\n" "$0{}"' \
    "http://127.0.0.1:$port" <"$tmp/$tool.paths" >"$tmp/$tool-$round/cold.txt"
  end=$(date +%s.%N)
  failed=$(grep -vc '^200 ' "$tmp/$tool-$round/cold.txt" || true)
  # The median and the 99th percentile (nearest rank) of the cold requests' latencies, in ms.
  latencies=$(awk '{ print $2 * 1000 }' "$tmp/$tool-$round/cold.txt" | sort -n | awk '
    { value[NR] = $1 }
    END { p50 = int(NR * 0.5 + 0.999); p99 = int(NR * 0.99 + 0.999); printf "%.0f %.0f", value[p50], value[p99] }')
  peak=$(peak_kib "$pid")
  [ "$failed" = 0 ] || echo "serve.sh: $tool: $failed cold requests were not answered 200 (see $tmp/$tool-$round/server.log)" >&2
  WRK_PATHS="$tmp/$tool.paths" timeout $((duration + 60)) wrk -t2 -c"$connections" -d"${duration}s" --timeout 10s \
    -s "$tmp/cycle.lua" "http://127.0.0.1:$port" >"$tmp/$tool-$round/wrk.txt"
  if grep -q 'Non-2xx' "$tmp/$tool-$round/wrk.txt"; then
    echo "serve.sh: $tool: warm answers other than 2xx: $(grep 'Non-2xx' "$tmp/$tool-$round/wrk.txt")" >&2
  fi
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$tmp/$tool-$round/wrk.txt")
  stop_servers
  rows+=("$tool $round $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }') \
$(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }') $rps $latencies")
  echo "== $tool round $round: ${rows[-1]#* * }; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
}

if [ -n "$soak" ]; then
  # 200 distinct inputs: the corpus' files again and again, as hard links of other names.
  mkdir -p "$tmp/soak-in"
  count=0 copy=1
  while [ $count -lt 200 ]; do
    for image in "${images[@]}"; do
      [ $count -lt 200 ] || break
      ln "$image" "$tmp/soak-in/r$copy-$(basename "$image")" 2>/dev/null || cp "$image" "$tmp/soak-in/r$copy-$(basename "$image")"
      count=$((count + 1))
    done
    copy=$((copy + 1))
  done
  ( cd "$tmp/soak-in" && printf '/small/%s\n' * ) >"$tmp/soak.paths"
  corpus=$tmp/soak-in
  start_server pipeline soak
  echo "== soak: 200 inputs, wrk -t2 -c32 for $soak min; $bin; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  : >"$tmp/rss.txt"
  ( while kill -0 "$pid" 2>/dev/null; do
      echo "$(date +%s) $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" >>"$tmp/rss.txt"
      sleep 5
    done ) &
  sampler=$!
  WRK_PATHS="$tmp/soak.paths" timeout $((soak * 60 + 120)) wrk -t2 -c32 -d"${soak}m" --timeout 30s \
    -s "$tmp/cycle.lua" "http://127.0.0.1:$port" >"$tmp/soak-wrk.txt"
  stop_servers
  kill "$sampler" 2>/dev/null || true
  cat "$tmp/soak-wrk.txt" >&2
  python3 - "$tmp/rss.txt" "$tmp/soak-wrk.txt" <<'PY'
import re, sys
samples = [line.split() for line in open(sys.argv[1]) if len(line.split()) == 2]
start = int(samples[0][0])
after = [(int(t) - start, int(kib) / 1024) for t, kib in samples if int(t) - start >= 60]
first, highest, last = after[0][1], max(r for _, r in after), after[-1][1]
wrk = open(sys.argv[2]).read()
requests = re.search(r"(\d+) requests in", wrk)
errors = re.search(r"Socket errors: (.*)", wrk)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk)
print(f"soak: {requests.group(1) if requests else '?'} requests; RSS after the first minute {first:.1f} MiB, "
      f"highest after it {highest:.1f} MiB ({(highest / first - 1) * 100:+.1f}%), last {last:.1f} MiB; "
      f"non-2xx answers: {non2xx.group(1) if non2xx else 0}; socket errors: {errors.group(1) if errors else 'none'}")
PY
  exit 0
fi

echo "== ${#images[@]} images from $corpus; thumbor $thumbor_version; $bin; wrk -c$connections -d${duration}s" >&2
for round in $(seq "$rounds"); do
  # Alternately first: the machine's speed drifts.
  if [ $((round % 2)) = 1 ]; then order="thumbor pipeline"; else order="pipeline thumbor"; fi
  for tool in $order; do measure "$tool" "$round"; done
done

printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [line.split() for line in sys.stdin if line.strip()]
def median(tool, column):
    return statistics.median(float(r[column]) for r in rows if r[0] == tool)
print("| | round | cold s | cold p50 ms | cold p99 ms | cold peak MiB | warm req/s |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for tool, round_, cold, peak, rps, p50, p99 in rows:
    print(f"| {tool} | {round_} | {cold} | {p50} | {p99} | {peak} | {float(rps):.0f} |")
for tool in ("thumbor", "pipeline"):
    print(f"| {tool}, median | | {median(tool, 2):.2f} | {median(tool, 5):.0f} | {median(tool, 6):.0f} | {median(tool, 3):.1f} | {median(tool, 4):.0f} |")
ratios = [median("pipeline", column) / median("thumbor", column) for column in (2, 5, 6, 3, 4)]
print("| **pipeline / thumbor** | | " + " | ".join(f"**{ratio:.2f}x**" for ratio in ratios) + " |")
'
