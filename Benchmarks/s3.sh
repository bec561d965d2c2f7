#!/usr/bin/env bash
# Benchmark: the standard job (as Benchmarks/run.sh: per input a 320x320 WebP cover crop, a
# 1280 px JPEG and a 32 px blurred JPEG placeholder) from and to a local S3-compatible server
# (moto) against the same job on local files: same command, same binary, same machine.
# Both run without the cache and without incremental skipping, so every run reads every input
# and writes every output.
#
# usage: Benchmarks/s3.sh [CORPUS_DIR] [--runs N]
#
# Environment: PIPELINE_CORPUS, PIPELINE_BIN (else a release build), PYTHON (default python3).
# Prints the median wall time of N runs (default 3) of each, alternating.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}
runs=3 corpus=""
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    *) corpus=$1; shift ;;
  esac
done
# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"
find_corpus_images s3.sh "$corpus"
use_release_binary "$repo"

tmp=$(mktemp -d)
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Scripts/moto-server exits when this script is gone, however it ended.
PIPELINE_MOTO_PARENT=$$ "$py" "$repo/Scripts/moto-server" -H 127.0.0.1 -p "$port" >"$tmp/moto.log" 2>&1 &
moto=$!
disown "$moto" # killed at exit without a job-control notice
trap 'kill -9 $moto 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/moto-api/" && break; sleep 0.1; done

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port"
unset AWS_PROFILE AWS_SESSION_TOKEN
"$here/s3-upload.sh" corpus in "${images[@]}"
"$here/s3-upload.sh" site out
write_standard_job "$tmp/local.json" "$corpus" "$tmp/out"
write_standard_job "$tmp/s3.json" "s3://corpus/in" "s3://site/out"

declare -A times
for run in $(seq "$runs"); do
  for kind in local s3; do
    start=$(date +%s.%N)
    "$bin" run --quiet "$tmp/$kind.json" 2>"$tmp/$kind.err" || { cat "$tmp/$kind.err" >&2; false; } || { echo "s3.sh: the $kind run failed" >&2; exit 1; }
    times[$kind]+="$("$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)") "
  done
done
for kind in local s3; do
  echo "$kind: ${#images[@]} inputs, runs ${times[$kind]}s, median $(echo "${times[$kind]}" | tr ' ' '\n' | sed '/^$/d' | sort -n | sed -n "$(( (runs + 1) / 2 ))p") s"
done
