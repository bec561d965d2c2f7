#!/usr/bin/env bash
# A responsive image set checked in a real browser: Pipelines/responsive.json run on the bundled
# samples, a page made with `pipeline html`, served on loopback and loaded in headless Chromium at
# a narrow and a wide viewport, at device pixel ratio 1 and 2, with photos whose names a URL must
# percent-encode among them (`with space.jpg`, `q?x#y%20.jpg`; .ci/srcset_check.py says what is
# checked). Installs Debian's `chromium` when it is missing (with sudo when not root): it is large,
# so it is installed here rather than by .ci/setup, which every user runs.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
swift build --product pipeline
python3 .ci/srcset_check.py "$(swift build --show-bin-path)/pipeline"
# Art direction: a square crop chosen at a narrow viewport, the wide photo at a wide one.
python3 .ci/art_check.py "$(swift build --show-bin-path)/pipeline"
