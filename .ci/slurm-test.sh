#!/usr/bin/env bash
# A sharded run on a real scheduler over S3: a one-machine Slurm cluster
# (deploy/slurm/local-cluster.sh) runs deploy/slurm/pipeline-array.sbatch as an array of 4 tasks
# that read a corpus of distinct photos from a moto S3 server on loopback (signature checking
# on, a key made through its IAM API) and write their outputs back to it. Checks that the union
# of the shards' objects is byte for byte what one unsharded run writes, with no key missing or
# extra; that a task killed mid-run and requeued (scontrol requeue) finishes its shard; and that
# merge-reports accounts for every input exactly once. Every wait is bounded; moto and the
# cluster are stopped at the end. No secret is printed: the key reaches the tasks through the
# environment, which sbatch exports by default.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
py=${PYTHON:-python3}
bin=${PIPELINE_BIN:-$(swift build --show-bin-path)/pipeline}
[ -x "$bin" ] || swift build --product pipeline
# Absolute: the tasks run in another folder.
bin=$(realpath "$bin")
started=$(date +%s)
work=$(mktemp -d /tmp/pipeline-slurm-test.XXXXXX)
export STATE_DIR=$work/cluster
moto=""
watcher=""
cleanup() {
  [ -n "$watcher" ] && kill "$watcher" 2>/dev/null || true
  "$repo/deploy/slurm/local-cluster.sh" stop >/dev/null 2>&1 || true
  [ -n "$moto" ] && kill -9 "$moto" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# 1. moto's S3 server on loopback. The first 3 requests are free (INITIAL_NO_AUTH_ACTION_COUNT):
# they make an IAM user, its key and a policy; every request after that must be signed with it.
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Scripts/moto-server exits when this script is gone, however it ended.
INITIAL_NO_AUTH_ACTION_COUNT=3 PIPELINE_MOTO_PARENT=$$ "$py" "$repo/Scripts/moto-server" -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto=$!
disown "$moto" # killed at exit without a job-control notice
endpoint=http://127.0.0.1:$port
# Up to 300 tries 0.1 s apart; connecting spends none of the free requests.
for try in $(seq 300); do
  curl -s -o /dev/null "$endpoint/moto-api/" && break
  [ "$try" = 300 ] && { echo "slurm-test: moto did not answer on $endpoint in 30 s" >&2; cat "$work/moto.log" >&2; exit 1; }
  sleep 0.1
done
# The key goes from Python to these variables without being printed.
read -r AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY < <("$py" - "$endpoint" <<'PY'
import json, sys, boto3
iam = boto3.client("iam", endpoint_url=sys.argv[1], region_name="us-east-1",
                   aws_access_key_id="AKIASETUPSETUPSETUP0", aws_secret_access_key="setup")
iam.create_user(UserName="slurm-test")
key = iam.create_access_key(UserName="slurm-test")["AccessKey"]
iam.put_user_policy(UserName="slurm-test", PolicyName="s3", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
print(key["AccessKeyId"], key["SecretAccessKey"])
PY
)
[ -n "$AWS_SECRET_ACCESS_KEY" ] || { echo "slurm-test: moto's IAM gave no key" >&2; exit 1; }
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3=$endpoint
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_DEFAULT_REGION

# 120 distinct inputs in s3://corpus/in/: the bundled photos, each in 24 versions (a byte
# appended, so nothing coalesces). Uploaded with the benchmark's helper; s3://out is empty.
mkdir -p "$work/corpus"
for k in $(seq 1 24); do
  for photo in Pipelines/samples/*.jpg; do
    { cat "$photo"; printf '%s' "$k"; } > "$work/corpus/$(basename "$photo" .jpg)-$k.jpg"
  done
done
inputs=$(find "$work/corpus" -name '*.jpg' | wc -l)
Benchmarks/s3-upload.sh corpus in "$work/corpus"/*.jpg
Benchmarks/s3-upload.sh out none
# Signature checking is really on: the same request with a wrong secret is refused.
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
status=$(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" -u "$AWS_ACCESS_KEY_ID:wrong" \
  -H "x-amz-content-sha256: $empty" "$endpoint/corpus?list-type=2")
[ "$status" = 403 ] || { echo "slurm-test: a wrong secret got HTTP $status from moto, not 403" >&2; exit 1; }

# One pipeline file per run, the same but for the output prefix.
make_file() { # FOLDER OUTPUT_PREFIX
  mkdir -p "$1"
  cat > "$1/pipeline.json" <<JSON
{"version": 1, "name": "slurm-test", "inputs": ["s3://corpus/in/*.jpg"],
 "outputs": [
  {"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "webp", "quality": 80}, "path": "s3://out/$2/{stem}-small.webp"},
  {"name": "large", "steps": [{"resize": {"width": 1024, "fit": "inside"}}], "encode": {"format": "jpeg", "quality": 85}, "path": "s3://out/$2/{stem}-large.jpg"}]}
JSON
}
make_file "$work/single" single
make_file "$work/sharded" sharded
"$bin" run --quiet "$work/single/pipeline.json"

deploy/slurm/local-cluster.sh start
# The cluster's daemons detach, and a SIGKILL runs no trap: a watcher stops them once this
# script is gone, checking each second for at most two hours. Its output goes nowhere, so it
# holds open no pipe of whoever runs this script.
(
  for _ in $(seq 7200); do
    kill -0 "$$" 2>/dev/null || break
    sleep 1
  done
  "$repo/deploy/slurm/local-cluster.sh" stop
) >/dev/null 2>&1 &
watcher=$!
disown "$watcher"
export SLURM_CONF=$STATE_DIR/slurm.conf

wait_for_job() {  # JOBID: until no task of it is pending or running (at most 600 s)
  for _ in $(seq 1200); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  echo "slurm-test: job $1 did not finish in 600 s" >&2; squeue; return 1
}
sharded_keys() { # the keys under s3://out/sharded/ so far (query sorted, as SigV4 wants)
  curl -s -f --max-time 5 --aws-sigv4 "aws:amz:us-east-1:s3" -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: $empty" "$endpoint/out?list-type=2&prefix=sharded" | grep -o '<Key>[^<]*</Key>' || true
}

# Which inputs are in shard 1: a cheap run of that shard alone (8 px JPEGs to a local folder),
# so that task 1 is requeued only once it has written an object of its own.
mkdir -p "$work/probe"
echo '{"version": 1, "name": "probe", "inputs": ["s3://corpus/in/*.jpg"], "incremental": false, "cache": {"enabled": false},
 "outputs": [{"name": "tiny", "steps": [{"resize": {"width": 8}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}' > "$work/probe/pipeline.json"
"$bin" run --quiet "$work/probe/pipeline.json" --shard 1/4
shard1_keys=$(cd "$work/probe/out" && ls | sed 's|^\(.*\)\.jpg$|<Key>sharded/\1-small.webp</Key>|')
[ -n "$shard1_keys" ] || { echo "slurm-test: shard 1 of 4 has no inputs" >&2; exit 1; }

cd "$work/sharded"
# 2. Four tasks; task 1 is requeued while it runs, once it has written one of its objects.
# The credentials reach the tasks in the environment sbatch exports.
job=$(PIPELINE_BIN=$bin sbatch --parsable --array=0-3 --output="$work/task-%A_%a.log" \
  "$repo/deploy/slurm/pipeline-array.sbatch" pipeline.json reports)
requeued=0
for _ in $(seq 1200); do  # at most about 2 minutes (0.1 s sleeps and listings)
  state=$(squeue -h -j "${job}_1" -o '%T' 2>/dev/null || true)
  if [ "$state" = RUNNING ] && grep -qxFf <(echo "$shard1_keys") <(sharded_keys); then
    scontrol requeue "${job}_1" && requeued=1
    break
  fi
  [ -z "$state" ] && break
  sleep 0.1
done
wait_for_job "$job"
echo "slurm-test: array job $job done (task 1 requeued mid-run: $requeued)"
[ "$requeued" = 1 ] || { echo "slurm-test: task 1 was not requeued while running" >&2; exit 1; }
for task in 0 1 2 3; do
  grep -q . "$work/task-${job}_$task.log" && { echo "task $task printed:"; cat "$work/task-${job}_$task.log"; } || true
done

# 3. The shards' objects together are byte for byte the single run's, with no key missing or extra.
"$py" - "$work/download" <<'PY'
import os, sys, boto3
s3 = boto3.client("s3")  # the AWS_* variables above
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="out"):
    for item in page.get("Contents", []):
        path = os.path.join(sys.argv[1], item["Key"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        s3.download_file("out", item["Key"], path)
PY
if ! diff -r "$work/download/single" "$work/download/sharded" >/dev/null; then
  echo "slurm-test: the sharded outputs differ from the single run's:" >&2
  diff -rq "$work/download/single" "$work/download/sharded" | head -n 20 >&2
  exit 1
fi
count=$(find "$work/download/sharded" -type f | wc -l)
[ "$count" = $((inputs * 2)) ] || { echo "slurm-test: $count objects, expected $((inputs * 2))" >&2; exit 1; }

# 4. merge-reports counts every input once, and no shard is missing.
"$bin" merge-reports --output "$work/merged" reports/shard-0 reports/shard-1 reports/shard-2 reports/shard-3
"$py" - "$work/merged/report.json" "$inputs" <<'PY'
import json, sys
report, expected = json.load(open(sys.argv[1])), int(sys.argv[2])
inputs = [item["input"] for item in report["items"]]
assert report["inputs"] == expected and len(inputs) == expected and len(set(inputs)) == expected, (report["inputs"], len(inputs), len(set(inputs)))
assert all(i.startswith("s3://corpus/in/") for i in inputs), inputs[:3]
assert report["failed"] == 0, report["failed"]
print(f"slurm-test: merged report has {len(inputs)} inputs, each once")
PY
# The requeued task found what its first attempt wrote up to date (fingerprints in S3), and made the rest.
"$py" - reports/shard-1/report.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print(f"slurm-test: requeued task 1: {report['outputsUpToDate']} outputs up to date from its first attempt, {report['outputsWritten']} written")
assert report["outputsUpToDate"] > 0 and report["failed"] == 0, report["outputsUpToDate"]
PY
echo "slurm-test: 4 shards on Slurm over S3 wrote the same $count objects as one run, byte for byte ($(( $(date +%s) - started )) s)"
