#!/usr/bin/env bash
# An animated AVIF that pipeline wrote, played in headless Chromium: an animated GIF of three
# frames made into an `avif` output, decoded by Chromium's image decoder: animated, every frame
# with its duration and colour (.ci/avif_animation_check.py says what is not checked).
# Installs Debian's `chromium` when it is missing, as .ci/srcset-chromium.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
swift build --product pipeline
python3 .ci/avif_animation_check.py "$(swift build --show-bin-path)/pipeline"
