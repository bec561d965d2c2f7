#!/usr/bin/env bash
# What pipeline makes for the web, checked in headless Chromium (each script's docstring says
# what it checks):
# - .ci/srcset_check.py: Pipelines/responsive.json's <picture> at a narrow and a wide viewport, at
#   device pixel ratio 1 and 2, with photos whose names a URL must percent-encode among them;
# - .ci/art_check.py: Pipelines/art-direction.json's square crop at a narrow viewport;
# - .ci/avif_animation_check.py: an animated AVIF's frames, durations and colours, played in an
#   <img>;
# - .ci/website_check.py: Pipelines/website.json, every web feature in one file.
# Installs Debian's `chromium` when it is missing (with sudo when not root): it is large, so it is
# installed here rather than by .ci/setup, which every user runs.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
# The binary PIPELINE_BIN names (CI's release build), or the debug build's.
binary=${PIPELINE_BIN:-$(swift build --show-bin-path)/pipeline}
[ -n "${PIPELINE_BIN:-}" ] || swift build --product pipeline
for check in srcset_check art_check avif_animation_check website_check; do
  python3 ".ci/$check.py" "$binary"
done
