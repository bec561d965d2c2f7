#!/usr/bin/env bash
# AVIF settings measured: bytes, SSIMULACRA 2 and CPU time of libvips' heifsave (what AVIF
# outputs were before libavif) and of the pipeline's libavif encode (Sources/CAvif/shim.h) at
# each setting, on photographs resized to 1920 and 960 wide.
#
# usage: Benchmarks/avif-settings.sh CORPUS_DIR [NAME...]
#
#   NAME  corpus files to use (default: six: abstract-Elephants.jpg gnome-wood-l.webp
#         nature-Dune.jpg nature-LadyBird.jpg nature-Aqua.jpg nature-Blinds.jpg).
#
# $AVIF_WIDTHS: the widths to resize to (default "1920 960"), never enlarged.
#
# Settings, one a line in $AVIF_SETTINGS (default: the list below): "heif Q EFFORT", or
# "avif CODEC SPEED QUANTIZER THREADS TILECOLS TILEROWS [CODEC_OPTIONS]". Scores come from an
# implementation independent of the pipeline's: $SSIMULACRA2, else `ssimulacra2` on the PATH,
# else /tmp/ssim2/build/ssimulacra2. Prints one CSV line per image and setting:
# image,setting,bytes,cpu_s,wall_s,ssimulacra2 (the setting's spaces as "_", its commas as
# "+"), then for each width the totals per setting against the first setting: bytes, CPU seconds, mean score
# and the worst image's score difference. Compare CPU time (user + system, every thread), not
# wall time, on a machine something else loads.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
corpus=${1:?usage: Benchmarks/avif-settings.sh CORPUS_DIR [NAME...]}
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(abstract-Elephants.jpg gnome-wood-l.webp nature-Dune.jpg nature-LadyBird.jpg nature-Aqua.jpg nature-Blinds.jpg)
ssim2=${SSIMULACRA2:-$(command -v ssimulacra2 || true)}
[ -z "$ssim2" ] && [ -x /tmp/ssim2/build/ssimulacra2 ] && ssim2=/tmp/ssim2/build/ssimulacra2
[ -n "$ssim2" ] || { echo "avif-settings.sh: no ssimulacra2 (set SSIMULACRA2=PATH)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/avif-settings.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -I"$here/../Sources/CAvif" "$here/avif-settings.c" -o "$tmp/encode" $(pkg-config --cflags --libs vips libavif)

settings=${AVIF_SETTINGS:-"heif 50 4
avif aom 5 32 1 0 0
avif aom 5 30 1 0 0
avif aom 5 34 1 0 0
avif aom 6 32 1 0 0
avif aom 6 31 1 0 0 enable-qm=1,enable-cdef=1,deltaq-mode=3
avif aom 5 32 1 0 0 min-partition-size=8
avif aom 5 32 1 0 0 enable-rect-partitions=0
avif aom 5 31 1 0 0 enable-qm=1,enable-cdef=1,min-partition-size=8,enable-ab-partitions=0,enable-1to4-partitions=0
avif svt 8 51 1 0 0
heif 50 0
avif aom 9 32 1 0 0"}

for name in "${names[@]}"; do
  stem=${name%.*}
  for width in ${AVIF_WIDTHS:-1920 960}; do
    vips thumbnail "$corpus/$name" "$tmp/$stem-$width.png" "$width" --height 100000 --size down
  done
done
export SVT_LOG=0
{
  for png in "$tmp"/*.png; do
    image=$(basename "$png" .png)
    while IFS= read -r setting; do
      [ -n "$setting" ] || continue
      # shellcheck disable=SC2086
      read -r bytes cpu wall < <("$tmp/encode" "$png" "$tmp/out.avif" $setting 2>/dev/null)
      vips copy "$tmp/out.avif" "$tmp/out.png" 2>/dev/null
      score=$("$ssim2" "$png" "$tmp/out.png" | tail -n1)
      label=${setting// /_}
      echo "$image,${label//,/+},$bytes,$cpu,$wall,$score"
    done <<< "$settings"
  done
} | tee "$tmp/results.csv"
python3 - "$tmp/results.csv" <<'PY'
import collections, sys
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip()]
halves = collections.OrderedDict()
for image, setting, size, cpu, wall, score in rows:
    width = image.rsplit("-", 1)[1]
    halves.setdefault(width, collections.OrderedDict()).setdefault(setting, {})[image] = (int(size), float(cpu), float(score))
for width, per in halves.items():
    first = next(iter(per.values()))
    print()
    print(f"{width} px wide: against the first setting")
    print(f"{'setting':60} {'images':>6} {'bytes':>10} {'x':>6} {'CPU s':>8} {'x':>5} {'SSIMULACRA 2':>12} {'diff':>6} {'worst':>6}")
    for setting, images in per.items():
        both = [i for i in images if i in first]
        size = sum(images[i][0] for i in both); cpu = sum(images[i][1] for i in both)
        score = sum(images[i][2] for i in both) / max(1, len(both))
        base_size = sum(first[i][0] for i in both); base_cpu = sum(first[i][1] for i in both)
        base_score = sum(first[i][2] for i in both) / max(1, len(both))
        worst = min((images[i][2] - first[i][2] for i in both), default=0.0)
        print(f"{setting:60} {len(both):6d} {size:10d} {size / max(1, base_size):6.3f} {cpu:8.2f} {cpu / max(1e-9, base_cpu):5.2f} "
              f"{score:12.2f} {score - base_score:+6.2f} {worst:+6.2f}")
PY
