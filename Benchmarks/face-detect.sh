#!/usr/bin/env bash
# The cost of `"position": "faces"`: OpenCV's cascade as the pipeline runs it, on greyscale
# copies 640 px on their long side (what CascadeFaceFinder searches), against OpenCV's defaults.
#
# usage: Benchmarks/face-detect.sh [IMAGE...]   (default: Pipelines/samples/*.jpg)
#
# Needs libvips-tools (vips), g++ and OpenCV's headers and libraries (Scripts/install-dependencies).
# Prints CSV: image, searched size, CPU ms a detection and faces found, the pipeline's way and
# OpenCV's defaults. Compare CPU time, not wall time, on a machine something else loads.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -I"$root/Sources/CFaceDetect/include" -I/usr/include/opencv4 "$root/Benchmarks/face-detect.cpp" \
  "$root/Sources/CFaceDetect/face_detect.cpp" -o "$work/face-detect" \
  -lopencv_objdetect -lopencv_imgcodecs -lopencv_imgproc -lopencv_core
images=("$@")
[ ${#images[@]} -gt 0 ] || images=("$root"/Pipelines/samples/*.jpg)
greys=()
for image in "${images[@]}"; do
  name=$(basename "${image%.*}")
  vips thumbnail "$image" "$work/$name.png" 640 --size down
  vips colourspace "$work/$name.png" "$work/$name-grey.png" b-w
  greys+=("$work/$name-grey.png")
done
"$work/face-detect" "${greys[@]}" | sed "s|$work/||; s|-grey.png||"
