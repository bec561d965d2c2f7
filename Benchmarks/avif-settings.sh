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
# Settings, one a line in $AVIF_SETTINGS (default: the list below): "heif Q EFFORT", or
# "avif CODEC SPEED QUANTIZER THREADS TILECOLS TILEROWS [CODEC_OPTIONS]". Scores come from an
# implementation independent of the pipeline's: $SSIMULACRA2, else `ssimulacra2` on the PATH,
# else /tmp/ssim2/build/ssimulacra2. Prints one CSV line per image and setting:
# image,setting,bytes,cpu_s,wall_s,ssimulacra2, then the totals per setting.
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
avif aom 6 32 1 0 0
avif aom 6 31 1 0 0 deltaq-mode=3
heif 50 0
avif aom 9 32 1 0 0
avif svt 8 40 1 0 0
avif rav1e 10 38 1 0 0"}

for name in "${names[@]}"; do
  stem=${name%.*}
  for width in 1920 960; do
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
      echo "$image,${setting// /_},$bytes,$cpu,$wall,$score"
    done <<< "$settings"
  done
} | tee "$tmp/results.csv"
python3 - "$tmp/results.csv" <<'PY'
import collections, sys
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip()]
total = collections.OrderedDict()
for image, setting, size, cpu, wall, score in rows:
    t = total.setdefault(setting, [0, 0.0, 0.0, 0])
    t[0] += int(size); t[1] += float(cpu); t[2] += float(score); t[3] += 1
print()
print(f"{'setting':40} {'images':>6} {'bytes':>10} {'CPU s':>8} {'mean SSIMULACRA 2':>18}")
for setting, (size, cpu, score, n) in total.items():
    print(f"{setting:40} {n:6d} {size:10d} {cpu:8.2f} {score / n:18.2f}")
PY
