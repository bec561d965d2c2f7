#!/usr/bin/env bash
# Writes the sample run report (Pipelines/thumbnails.json over the bundled samples, plus a broken
# input and an output that cannot be written) and photographs its page with headless Chromium,
# so a person can look at what `pipeline run FILE --report DIR` produces.
#
#   .ci/report-screenshot.sh [REPORT_DIR [SCREENSHOT.png [WIDTHxHEIGHT]]]
#
# Defaults: /tmp/pipeline-report, /tmp/pipeline-report.png, 1280x1600. Installs Debian's
# `chromium` when it is missing (with sudo when not root).
set -euo pipefail
cd "$(dirname "$0")/.."
report_dir="${1:-/tmp/pipeline-report}"
screenshot="${2:-/tmp/pipeline-report.png}"
size="${3:-1280x1600}"

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

mkdir -p "$report_dir"
report_dir="$(cd "$report_dir" && pwd)"
# The test that writes the sample report keeps it in PIPELINE_REPORT_DIR (the run under run/).
PIPELINE_REPORT_DIR="$report_dir" swift test --filter 'ReportWriterTests/writesAReportForScreenshots'
test -s "$report_dir/index.html"

# A throwaway profile, so the screenshot does not depend on (or change) anyone's settings.
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$screenshot" --window-size="${size/x/,}" "file://$report_dir/index.html" 2>/dev/null
test -s "$screenshot"
echo "report: $report_dir/index.html"
echo "screenshot: $screenshot"
