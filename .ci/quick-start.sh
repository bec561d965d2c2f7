#!/usr/bin/env bash
# The README's quick start as a new user runs it: `swift run pipeline run Pipelines/thumbnails.json`,
# in SwiftPM's default configuration (debug) and build folder, which no other step builds.
#
#   .ci/quick-start.sh build   # the debug build; fails on a compiler warning in this package's code
#   .ci/quick-start.sh run     # the run: three variants of each bundled sample photo, then removed
#
# With no argument, both.
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
  .ci/without-warnings.sh swift build --product pipeline
}

run() {
  rm -rf Pipelines/out
  swift run pipeline run Pipelines/thumbnails.json
  local missing=0 photo stem folder
  while IFS= read -r photo; do
    stem=$(basename "$photo" .jpg)
    folder=$(dirname "${photo#Pipelines/samples}")
    folder=Pipelines/out${folder%/.}
    for made in "$folder/$stem-small.webp" "$folder/$stem-large.jpg" "$folder/$stem-placeholder.jpg"; do
      if [ ! -s "$made" ]; then
        echo "quick-start: $photo: $made was not made" >&2
        missing=1
        continue
      fi
      # The bytes begin as their format's do: RIFF….WEBP, or a JPEG's start of image.
      case "$made" in
        *.webp) [ "$(head -c 4 "$made")$(tail -c +9 "$made" | head -c 4)" = RIFFWEBP ] ;;
        *.jpg) [ "$(head -c 2 "$made" | od -An -tx1 | tr -d ' ')" = ffd8 ] ;;
      esac || {
        echo "quick-start: $made is not a $(basename "${made##*.}") file" >&2
        missing=1
      }
    done
  done < <(find Pipelines/samples -name '*.jpg' | sort)
  rm -rf Pipelines/out
  [ "$missing" = 0 ]
  echo "quick-start: $(find Pipelines/samples -name '*.jpg' | wc -l) sample photos, three variants of each"
}

case "${1:-all}" in
  build) build ;;
  run) run ;;
  all) build && run ;;
  *) echo "usage: .ci/quick-start.sh [build|run]" >&2; exit 2 ;;
esac
