#!/usr/bin/env bash
# An animation resized by a step, beside an output that keeps the decode large: for each count
# of frames given, makes a GIF of that many 500×500 frames (each different), runs `pipeline` with
# a 320 px JPEG of the first frame and a 64 px animated GIF, and prints the seconds of the GIF's
# process stage (from `--json`), the run's CPU and wall time and its peak memory (GNU time). The
# JPEG makes the decoder keep frames 320 px wide, so the GIF's own resize step does the work.
#
# usage: Benchmarks/animation-resize.sh [FRAMES...]   (default: 100 200 400)
#
# Needs pyvips (to make the GIFs), GNU time and a built `pipeline` ($PIPELINE_BIN, else
# .build/release, else .build/debug).
set -euo pipefail
[ $# -gt 0 ] || set -- 100 200 400
root=$(cd "$(dirname "$0")/.." && pwd)
pipeline=${PIPELINE_BIN:-$root/.build/release/pipeline}
[ -x "$pipeline" ] || pipeline=$root/.build/debug/pipeline
for tool in /usr/bin/time python3 "$pipeline"; do
  command -v "$tool" >/dev/null || { echo "animation-resize.sh: needs $tool" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat >p.json <<'JSON'
{"version": 1, "inputs": ["in.gif"], "incremental": false, "outputs": [
 {"name": "still", "steps": [{"resize": {"width": 320}}], "encode": {"format": "jpeg"}, "path": "out/still.jpg"},
 {"name": "anim", "steps": [{"resize": {"width": 64}}], "encode": {"format": "gif"}, "path": "out/anim.gif"}]}
JSON
for frames in "$@"; do
  python3 "$root/Benchmarks/moving-box-gif.py" in.gif "$frames" 500 500 40
  /usr/bin/time -o time.txt -f "%U %e %M" "$pipeline" run --json p.json >events.jsonl
  read -r user wall peak <time.txt
  process=$(python3 -c '
import json, sys
for line in open("events.jsonl"):
    event = json.loads(line)
    if event.get("event") == "stageFinished" and event.get("stage") == "process" and event.get("output") == "anim":
        print(round(event["seconds"], 2))')
  echo "$frames frames: anim process ${process} s, ${user} s user, ${wall} s wall, $((peak / 1024)) MB peak"
done
