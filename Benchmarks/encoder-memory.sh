#!/usr/bin/env bash
# What each encoder holds while it writes: the peak RSS of libvips' saver (`vips copy IN OUT.fmt[…]`,
# one libvips thread) over a plain copy of the same image (`vips copy IN OUT.v`), for a photo
# made 1920×1080 and 3840×2160. The figures behind `EncoderSettings.workingBytes(pixels:)`,
# which admission by memory counts for each input (see the README, "Memory of the encoders").
#
# usage: Benchmarks/encoder-memory.sh [PHOTO]
#
#   PHOTO  any photograph libvips reads (default: the first JPEG of the benchmark corpus,
#          $PIPELINE_CORPUS or ~/.cache/pipeline-bench/corpus).
#
# Needs the `vips` command (Debian's libvips-tools, which .ci/setup installs) and GNU time.
set -euo pipefail

corpus=${PIPELINE_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/pipeline-bench/corpus}
photo=${1:-$(find "$corpus" -maxdepth 1 -name '*.jpg' 2>/dev/null | LC_ALL=C sort | head -1)}
if [ -z "$photo" ] || [ ! -f "$photo" ]; then
  echo "encoder-memory.sh: no photo given and none in $corpus" >&2
  exit 2
fi
for tool in vips /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "encoder-memory.sh: needs $tool" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export VIPS_CONCURRENCY=1

# Peak resident KiB of `vips copy INPUT TARGET`.
peak() { /usr/bin/time -f "%M" vips copy "$1" "$2" 2>&1 >/dev/null | tail -1; }

echo "photo: $photo; machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(vips --version)"
printf '%-11s %-44s %9s %9s\n' size saver "MiB over" "B/pixel"
for size in 1920x1080 3840x2160; do
  width=${size%x*} height=${size#*x}
  input="$work/in-$width.v"
  vips thumbnail "$photo" "$input" "$width" --height "$height" --size force
  base=$(peak "$input" "$work/out.v")
  for saver in "avif[Q=50,effort=0,compression=av1]" "avif[Q=50,effort=4,compression=av1]" \
               "avif[Q=50,effort=9,compression=av1]" "avif[lossless=true,effort=4,compression=av1]" \
               "webp[Q=80,effort=4]" "webp[Q=80,effort=6]" "webp[lossless=true,effort=4]" \
               "jpg[Q=80]" "jpg[Q=80,interlace=true]" "png[compression=6]" "png[palette=true,Q=100,effort=7]" \
               "gif[effort=7]" "gif[effort=10,interframe_maxerror=8]" "jxl[Q=75,effort=7]" "jxl[lossless=true,effort=7]" \
               "jxl[Q=75,effort=9]" "heic[Q=50,effort=4,compression=hevc]" "heic[Q=50,effort=9,compression=hevc]" \
               "heic[lossless=true,compression=hevc]" "tif[compression=deflate]" "tif[compression=jpeg,tile=true,pyramid=true]" \
               "tif[compression=zstd,tile=true,pyramid=true]"; do
    over=$(( $(peak "$input" "$work/out.$saver") - base ))
    printf '%-11s %-44s %9.1f %9.1f\n' "$size" "$saver" "$(echo "$over / 1024" | bc -l)" "$(echo "$over * 1024 / ($width * $height)" | bc -l)"
  done
done
