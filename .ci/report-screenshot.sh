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
# The sample run (ReportWriterTests checks the same one): the bundled samples, a text file
# named .jpg, and a folder where one output should go, so one output cannot be written.
work="$report_dir/run"
rm -rf "$work"
mkdir -p "$work/samples" "$work/out/storm-large.jpg"
cp Pipelines/samples/*.jpg "$work/samples/"
printf '<html>404 Not Found</html>\n' > "$work/samples/broken.jpg"
cp Pipelines/thumbnails.json "$work/"
# Exit status 1: two inputs fail on purpose.
swift run -c release pipeline run --quiet --report "$report_dir" "$work/thumbnails.json" || [ $? -eq 1 ]
test -s "$report_dir/index.html"

# A throwaway profile, so the screenshot does not depend on (or change) anyone's settings.
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$screenshot" --window-size="${size/x/,}" "file://$report_dir/index.html" 2>/dev/null
test -s "$screenshot"
echo "report: $report_dir/index.html"
echo "screenshot: $screenshot"
