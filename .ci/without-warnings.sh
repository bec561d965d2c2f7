#!/usr/bin/env bash
# Runs a build command, its output shown as it comes, and fails when the build failed or the
# compiler warned in this package's own code (Sources/, Plugins/, Tests/). SwiftPM's notes about
# dependencies (glib's -pthread, a package's unhandled files) name no file of ours.
#
#   .ci/without-warnings.sh make test-build
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$@" 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "without-warnings: '$*' failed (above)" >&2
  exit "$status"
fi
if grep -E "^$root/(Sources|Plugins|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log"; then
  echo "without-warnings: '$*' warned in this package's code (above)" >&2
  exit 1
fi
