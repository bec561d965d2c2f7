#!/usr/bin/env bash
# What pipeline makes for the web, checked in headless Chromium (each script's docstring says
# what it checks):
# - .ci/srcset_check.py: Pipelines/responsive.json's <picture> at a narrow and a wide viewport, at
#   device pixel ratio 1 and 2, with photos whose names a URL must percent-encode among them;
# - .ci/art_check.py: Pipelines/art-direction.json's square crop at a narrow viewport;
# - .ci/avif_animation_check.py: an animated AVIF's frames, durations and colours, played in an
#   <img>;
# - .ci/website_check.py: Pipelines/website.json, every web feature in one file;
# - .ci/transparency_check.py: no placeholder left showing around a transparent logo.
# Installs Debian's `chromium` when it is missing (.ci/setup-checks, with sudo when not root): it
# is large, so it is installed for the checks rather than by .ci/setup, which every user runs.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null 2>&1 || .ci/setup-checks
# The binary PIPELINE_BIN names (CI's release build), or the debug build's.
binary=${PIPELINE_BIN:-$(swift build --show-bin-path)/pipeline}
[ -n "${PIPELINE_BIN:-}" ] || swift build --product pipeline
for check in srcset_check art_check avif_animation_check website_check transparency_check; do
  python3 ".ci/$check.py" "$binary"
done
