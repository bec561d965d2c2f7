#!/usr/bin/env bash
# The suite in several test processes at once, for the sanitizer runs.
#
#   .ci/test-in-shards.sh SHARDS [--only REGEX] [--alone REGEX] [swift build options...]
#   .ci/test-in-shards.sh --measure [swift build options...]
#
# Swift Testing runs a test on a thread of Swift's cooperative pool, which is as wide as the
# machine has cores, and a test that waits (for a `pipeline` process, a server, a timeout)
# holds its thread while it waits: on two cores, two waiting tests leave the processor idle.
# Under a sanitizer most of the suite's time was such waiting. Here the test suites are dealt
# to SHARDS processes of one test bundle, which the caller has built with the same options
# (`make test` and `make test-hostile` do). A suite stays whole in one process, so suites marked
# `.serialized` still run one test at a time there. `--only` keeps the tests whose identifiers
# match REGEX. `--alone` runs the tests matching its REGEX in one more process, beside the others,
# with PIPELINE_TEST_ALONE set (CommandRunner.lanesAreFree): tests that need the process's lanes
# to themselves, which mostly wait. Each process's output goes to a log, printed in full when
# that process fails.
# The number of tests run must equal the number listed, so no suite is dropped between shards.
#
# The suites are dealt by cost, the dearest first, each to the process with the least so far, so
# that the processes end together rather than one running on alone. A suite's cost is the
# processor time it took run alone under ThreadSanitizer, read from .ci/suite-costs; a suite not
# there costs as much as the median one. `--measure` runs each suite alone, one after another,
# and writes that file anew: it takes as long as the suite does on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
costs=.ci/suite-costs
measure=false
shards=
only=
alone=
if [ "${1:-}" = --measure ]; then
  measure=true
  shift
else
  shards=$1
  shift
  if [ "${1:-}" = --only ]; then
    only=$2
    shift 2
  fi
  if [ "${1:-}" = --alone ]; then
    alone=$2
    shift 2
  fi
fi

bundle="$(swift build --show-bin-path "$@")/pipelinePackageTests.xctest"
[ -x "$bundle" ] || { echo "test-in-shards: no test bundle at $bundle: build the tests with these options first" >&2; exit 1; }
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
"$bundle" --testing-library swift-testing --list-tests 2>/dev/null | grep -E '^[A-Za-z_]' |
  { if [ -n "$only" ]; then grep -E "$only" || true; else cat; fi; } >"$logs/tests"
listed=$(wc -l <"$logs/tests")
[ "$listed" -gt 0 ] || { echo "test-in-shards: no tests listed" >&2; exit 1; }

# A suite is the identifier up to its first slash (Module.Suite), or for a suite nested in
# another up to its second (Module.Outer/Inner): the outer suites only group (VipsTests'
# OneAtATime serializes tests over libvips' one error buffer, which each process has its own of).
# Writes each process's filter (or with --measure, each suite's) to the logs folder.
python3 - "${shards:-0}" "$logs" "$only" "$costs" "$alone" <<'EOF'
import re, statistics, sys
shards, logs, only, costs_file, alone = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
def suite(test):
    parts = test.strip().split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
def pattern(names):
    alternatives = "|".join(re.escape(name) for name in names)
    # Whole suites, or within them the tests --only names and not those --alone names
    # (lookaheads over the identifier).
    lookaheads = (f"(?=.*({only}))" if only else "") + (f"(?!.*({alone}))" if alone else "")
    return f"^{lookaheads}({alternatives})/" if names else "^$"
suites = sorted({suite(line) for line in open(f"{logs}/tests") if line.strip()})
if shards == 0:
    with open(f"{logs}/suites", "w") as listing:
        for name in suites:
            listing.write(f"{name}\t{pattern([name])}\n")
    sys.exit()
known = {}
try:
    for line in open(costs_file):
        if line.strip() and not line.startswith("#"):
            seconds, name = line.split(maxsplit=1)
            known[name.strip()] = float(seconds)
except FileNotFoundError:
    pass
median = statistics.median(known.values()) if known else 1.0
dealt = [[] for _ in range(shards)]
load = [0.0] * shards
for name in sorted(suites, key=lambda name: (-known.get(name, median), name)):
    lightest = load.index(min(load))
    dealt[lightest].append(name)
    load[lightest] += known.get(name, median)
for shard, names in enumerate(dealt):
    open(f"{logs}/filter-{shard}", "w").write(pattern(names))
EOF

if $measure; then
  # Each suite alone: its processor time is its process's, and that of the processes it waited for.
  {
    echo "# Processor seconds each suite took run alone under ThreadSanitizer, the dearest first:"
    echo "# .ci/test-in-shards.sh deals suites by them. Written by .ci/test-in-shards.sh --measure."
    while IFS=$'\t' read -r name filter; do
      /usr/bin/time -o "$logs/time" -f "%U %S" "$bundle" --testing-library swift-testing --filter "$filter" \
        >"$logs/log" 2>&1 || { cat "$logs/log" >&2; exit 1; }
      echo "$(awk '{ printf "%.1f", $1 + $2 }' "$logs/time") $name"
    done <"$logs/suites" | sort -rn
  } >"$logs/costs"
  mv "$logs/costs" "$costs"
  echo "test-in-shards: wrote $costs: $(grep -vc '^#' "$costs") suites"
  exit 0
fi

# The test bundle itself, not `swift test`: SwiftPM holds a lock on the build folder while it
# runs, so `swift test` processes on one build would run one after another.
pids=()
for ((shard = 0; shard < shards; shard++)); do
  "$bundle" --testing-library swift-testing --filter "$(cat "$logs/filter-$shard")" >"$logs/log-$shard" 2>&1 &
  pids+=($!)
done
processes=$shards
if [ -n "$alone" ]; then
  filter="^${only:+(?=.*($only))}(?=.*($alone))"
  PIPELINE_TEST_ALONE=1 "$bundle" --testing-library swift-testing --filter "$filter" >"$logs/log-$shards" 2>&1 &
  pids+=($!)
  processes=$((shards + 1))
fi
# The tests a log says started and does not say passed or failed, a line each.
still_running() {
  awk '
    /^◇ Test .* started\.$/ && !/^◇ Test (run|case) / { name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); open[name] = 1 }
    /^(✔|✘) Test .* (passed|failed)/ { name = $0; sub(/^(✔|✘) Test /, "", name); sub(/( with [0-9]+ test cases?)? (passed|failed).*$/, "", name); delete open[name] }
    END { for (name in open) print "  " name }
  ' "$1"
}
declare -A unfinished
failed=0
ran=0
for ((shard = 0; shard < processes; shard++)); do
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
    unfinished[$shard]=$(still_running "$logs/log-$shard")
  fi
done
# A process that crashed stops mid-log, and CI may keep only the end of what it prints: the
# tests each failed process had started and not finished, and the top of its first sanitizer
# report, come last, where that end shows them.
for shard in "${!unfinished[@]}"; do
  echo "shard $shard ended while these tests ran:"
  echo "${unfinished[$shard]:-  (none)}"
  grep -m 1 -A 24 -E '^==[0-9]+==ERROR: |^WARNING: (Thread|Address)Sanitizer' "$logs/log-$shard" | sed 's/^/  /' || true
done
echo "test-in-shards: $ran of $listed listed tests ran in $processes processes"
[ "$ran" -eq "$listed" ] || { echo "test-in-shards: the shards ran $ran tests, not the $listed listed" >&2; failed=1; }
exit "$failed"
