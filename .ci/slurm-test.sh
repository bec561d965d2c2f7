#!/usr/bin/env bash
# A sharded run on a real scheduler: a one-machine Slurm cluster (deploy/slurm/local-cluster.sh)
# runs deploy/slurm/pipeline-array.sbatch as an array of 4 tasks over a corpus of distinct
# photos. Checks that the union of the shards' outputs is byte for byte what one unsharded run
# makes; that a task killed mid-run and requeued (scontrol requeue) finishes its shard with
# nothing missing or duplicated; and that merge-reports accounts for every input exactly once.
# Every wait is bounded; the cluster is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=${PIPELINE_BIN:-$(swift build --show-bin-path)/pipeline}
[ -x "$bin" ] || swift build --product pipeline
work=$(mktemp -d /tmp/pipeline-slurm-test.XXXXXX)
export STATE_DIR=$work/cluster
cleanup() { "$repo/deploy/slurm/local-cluster.sh" stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
deploy/slurm/local-cluster.sh start
export SLURM_CONF=$STATE_DIR/slurm.conf

# 120 distinct inputs: the bundled photos, each in 24 versions (a byte appended, so nothing coalesces).
make_folder() {
  mkdir -p "$1/in"
  for k in $(seq 1 24); do
    for photo in Pipelines/samples/*.jpg; do
      name=$(basename "$photo" .jpg)
      { cat "$photo"; printf '%s' "$k"; } > "$1/in/$name-$k.jpg"
    done
  done
  cat > "$1/pipeline.json" <<'JSON'
{"version": 1, "name": "slurm-test", "inputs": ["in/*.jpg"],
 "outputs": [
  {"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "webp", "quality": 80}, "path": "out/{stem}-small.webp"},
  {"name": "large", "steps": [{"resize": {"width": 1024, "fit": "inside"}}], "encode": {"format": "jpeg", "quality": 85}, "path": "out/{stem}-large.jpg"}]}
JSON
}
make_folder "$work/single"
make_folder "$work/sharded"
"$bin" run --quiet "$work/single/pipeline.json"

wait_for_job() {  # JOBID: until no task of it is pending or running (at most 600 s)
  for _ in $(seq 1200); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  echo "slurm-test: job $1 did not finish in 600 s" >&2; squeue; return 1
}

cd "$work/sharded"
# 1. Four tasks; task 1 is requeued while it runs.
job=$(PIPELINE_BIN=$bin sbatch --parsable --array=0-3 --output="$work/task-%A_%a.log" \
  "$repo/deploy/slurm/pipeline-array.sbatch" pipeline.json reports)
requeued=0
for _ in $(seq 600); do
  state=$(squeue -h -j "${job}_1" -o '%T' 2>/dev/null || true)
  if [ "$state" = RUNNING ] && [ -n "$(find out -name '*.webp' 2>/dev/null | head -n1)" ]; then
    scontrol requeue "${job}_1" && requeued=1
    break
  fi
  [ -z "$state" ] && break
  sleep 0.1
done
wait_for_job "$job"
echo "slurm-test: array job $job done (task 1 requeued mid-run: $requeued)"
for task in 0 1 2 3; do
  grep -q . "$work/task-${job}_$task.log" && { echo "task $task printed:"; cat "$work/task-${job}_$task.log"; } || true
done

# 2. The shards' outputs together are byte for byte the single run's, with nothing left over.
if ! diff -r "$work/single/out" "$work/sharded/out" >/dev/null; then
  echo "slurm-test: the sharded outputs differ from the single run's:" >&2
  diff -rq "$work/single/out" "$work/sharded/out" | head -n 20 >&2
  exit 1
fi
leftovers=$(find "$work/sharded/out" -name '.*pipeline-tmp*' | wc -l)
[ "$leftovers" = 0 ] || { echo "slurm-test: $leftovers temporary files left" >&2; exit 1; }
count=$(find "$work/sharded/out" -type f | wc -l)

# 3. merge-reports counts every input once, and no shard is missing.
"$bin" merge-reports --output "$work/merged" reports/shard-0 reports/shard-1 reports/shard-2 reports/shard-3
python3 - "$work/merged/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
inputs = [item["input"] for item in report["items"]]
assert report["inputs"] == 120 and len(inputs) == 120 and len(set(inputs)) == 120, (report["inputs"], len(inputs), len(set(inputs)))
assert report["failed"] == 0, report["failed"]
print(f"slurm-test: merged report has {len(inputs)} inputs, each once")
PY
echo "slurm-test: 4 shards on Slurm made the same $count files as one run, byte for byte"
