#!/usr/bin/env bash
# Builds, tests and runs Examples/PluginPackage: a plugin in its own package, depending on this
# repository by path, with its own command. Fails unless its step shows up in `plugins` and
# `schema`, a misspelt step gets a suggestion, and its pipeline file makes every output.
set -euo pipefail
cd "$(dirname "$0")/../Examples/PluginPackage"
swift build
swift test
bin=.build/debug/sepia-pipeline
# Read whole, then searched: `cmd | grep -q` under pipefail fails when grep stops reading early.
plugins=$("$bin" plugins)
schema=$("$bin" schema)
grep -q '^sepia: ' <<< "$plugins" || { echo "sepia missing from plugins" >&2; exit 1; }
grep -q '^resize: ' <<< "$plugins" || { echo "built-in steps missing from plugins" >&2; exit 1; }
grep -q '"sepia"' <<< "$schema" || { echo "sepia missing from schema" >&2; exit 1; }
misspelt=$(mktemp -d)
trap 'rm -rf "$misspelt"' EXIT
sed 's/"sepia": {/"sepai": {/' sepia.json > "$misspelt/sepia.json"
set +e
"$bin" validate "$misspelt/sepia.json" 2> "$misspelt/errors"
status=$?
set -e
[ "$status" = 2 ] && grep -q 'did you mean "sepia"' "$misspelt/errors" \
  || { echo "a misspelt step should exit 2 with a suggestion (got $status)" >&2; cat "$misspelt/errors" >&2; exit 1; }
rm -rf out
"$bin" run --quiet sepia.json
count=$(find out -name '*-sepia.jpg' | wc -l)
[ "$count" = 5 ] || { echo "expected 5 sepia outputs, found $count" >&2; exit 1; }
echo "plugin example: sepia-pipeline built, tested, listed the step and made $count outputs"
