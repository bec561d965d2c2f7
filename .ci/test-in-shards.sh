#!/usr/bin/env bash
# The suite in several test processes at once, for the sanitizer runs.
#
#   .ci/test-in-shards.sh SHARDS [--only REGEX] [swift test options...]
#
# Swift Testing runs a test on a thread of Swift's cooperative pool, which is as wide as the
# machine has cores, and a test that waits (for a `pipeline` process, a server, a timeout)
# holds its thread while it waits: on two cores, two waiting tests leave the processor idle.
# Under a sanitizer most of the suite's time was such waiting. Here the test suites are dealt
# round-robin to SHARDS processes built once; a suite stays whole in one process, so suites
# marked `.serialized` still run one test at a time there. `--only` keeps the tests whose
# identifiers match REGEX. Each process's output goes to a log, printed in full when that
# process fails. The number of tests run must equal the number listed, so no suite is dropped
# between shards.
set -euo pipefail
cd "$(dirname "$0")/.."
shards=$1
shift
only=
if [ "${1:-}" = --only ]; then
  only=$2
  shift 2
fi

swift build --build-tests "$@"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
swift test --skip-build "$@" --list-tests 2>/dev/null | { if [ -n "$only" ]; then grep -E "$only" || true; else cat; fi; } >"$logs/tests"
listed=$(wc -l <"$logs/tests")
[ "$listed" -gt 0 ] || { echo "test-in-shards: no tests listed" >&2; exit 1; }

# A suite is the identifier up to its first slash (Module.Suite), or for a suite nested in
# another up to its second (Module.Outer/Inner): the outer suites only group (VipsTests'
# OneAtATime serializes tests over libvips' one error buffer, which each process has its own of).
python3 - "$shards" "$logs" "$only" <<'EOF'
import re, sys
shards, logs, only = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def suite(test):
    parts = test.strip().split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
suites = sorted({suite(line) for line in open(f"{logs}/tests") if line.strip()})
for shard in range(shards):
    names = "|".join(re.escape(name) for name in suites[shard::shards])
    # Whole suites, or within them the tests --only names (a lookahead over the identifier).
    pattern = (f"^(?=.*({only}))" if only else "^") + f"({names})/" if names else "^$"
    open(f"{logs}/filter-{shard}", "w").write(pattern)
EOF

# The test bundle itself, not `swift test`: SwiftPM holds a lock on the build folder while it
# runs, so `swift test` processes on one build would run one after another.
bundle="$(swift build --show-bin-path "$@")/pipelinePackageTests.xctest"
pids=()
for ((shard = 0; shard < shards; shard++)); do
  "$bundle" --testing-library swift-testing --filter "$(cat "$logs/filter-$shard")" >"$logs/log-$shard" 2>&1 &
  pids+=($!)
done
failed=0
ran=0
for ((shard = 0; shard < shards; shard++)); do
  status=0
  wait "${pids[$shard]}" || status=$?
  summary=$(grep -E "Test run with [0-9]+ tests?" "$logs/log-$shard" | tail -n 1 || true)
  echo "shard $shard: exit $status: ${summary:-no summary}"
  ran=$((ran + $(echo "$summary" | sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' | grep . || echo 0)))
  if [ "$status" -ne 0 ]; then
    failed=1
    echo "---- shard $shard's output ----"
    cat "$logs/log-$shard"
    echo "---- end of shard $shard ----"
  fi
done
echo "test-in-shards: $ran of $listed listed tests ran in $shards processes"
[ "$ran" -eq "$listed" ] || { echo "test-in-shards: the shards ran $ran tests, not the $listed listed" >&2; failed=1; }
exit "$failed"
