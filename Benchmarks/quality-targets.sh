#!/usr/bin/env bash
# Quality targets against fixed quality: 12 photographs made 1,024 px wide in JPEG, WebP and
# AVIF, once at fixed qualities (FIXED_JPEG, FIXED_WEBP, FIXED_AVIF: the lowest steps of 5 at
# which all 12 reach SSIMULACRA 2 75, as measured for issue 31) and once with
# {"ssimulacra2": TARGET}. Prints the wall time of each run, the bytes of each format, and each
# targeted file's score by an independent implementation (the Python package ssimulacra2, in
# $SSIM_PYTHON, default python3), against a lossless PNG of the same resized image, and by the
# reference tool too when $SSIM_REFERENCE names its binary (cloudinary/ssimulacra2's
# `ssimulacra2`). RUNS (default 2) sets how many times fixed and targeted runs alternate.
# WIDTHS="320 640 960 1280" makes each photograph at those widths instead (an output with
# `widths`), times the runs only, and scores nothing; so does a Python without the package.
#
#   Benchmarks/quality-targets.sh [CORPUS]      (PIPELINE_BIN=... to measure another build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/common.sh"
use_release_binary "$repo"
find_corpus_images quality-targets.sh "${1:-}"
make_bench_folder quality-targets
target=${TARGET:-75}
fixed_jpeg=${FIXED_JPEG:-90}
fixed_webp=${FIXED_WEBP:-90}
fixed_avif=${FIXED_AVIF:-75}
python=${SSIM_PYTHON:-python3}

# Twelve different photographs: JPEGs, without the same picture at other sizes.
mkdir -p "$tmp/in"
count=0
for image in "$corpus"/*.jpg; do
  case $image in *_[0-9]*x[0-9]*.jpg) continue ;; esac
  ln -s "$image" "$tmp/in/"
  count=$((count + 1))
  [ $count -eq 12 ] && break
done
[ $count -eq 12 ] || { echo "quality-targets.sh: need 12 photographs in $corpus, found $count" >&2; exit 2; }

# One width by a resize step, or WIDTHS as an output's widths.
if [ -n "${WIDTHS:-}" ]; then
  size="\"widths\": [$(echo "$WIDTHS" | tr ' ' ',')], \"path\": \"\$1/{stem}-{width}.{format}\""
else
  size="\"steps\": [{\"resize\": {\"width\": 1024}}], \"path\": \"\$1/{stem}.{format}\""
fi
job() { # NAME JPEG_QUALITY WEBP_QUALITY AVIF_QUALITY
  cat > "$tmp/$1.json" <<EOF
{"version": 1, "inputs": ["in/*.jpg"], "incremental": false,
 "outputs": [{"name": "web", ${size//\$1/$1},
   "formats": [{"format": "jpeg", "quality": $2, "strip": true}, {"format": "webp", "quality": $3, "strip": true},
               {"format": "avif", "quality": $4, "strip": true}]}]}
EOF
}
job fixed "$fixed_jpeg" "$fixed_webp" "$fixed_avif"
job target "{\"ssimulacra2\": $target}" "{\"ssimulacra2\": $target}" "{\"ssimulacra2\": $target}"
cat > "$tmp/reference.json" <<EOF
{"version": 1, "inputs": ["in/*.jpg"], "incremental": false,
 "outputs": [{"name": "png", "steps": [{"resize": {"width": 1024}}], "encode": {"format": "png", "strip": true}, "path": "reference/{stem}.png"}]}
EOF
"$bin" run "$tmp/reference.json" >/dev/null

seconds() { local start end; start=$(date +%s.%N); "$bin" run "$tmp/$1.json" --report "$tmp/$1-report" >/dev/null 2>"$tmp/$1.err"; end=$(date +%s.%N); echo "$end - $start" | bc; }
for run in $(seq "${RUNS:-2}"); do
  fixed_s=$(seconds fixed)
  target_s=$(seconds target)
  echo "run $run: fixed ${fixed_s}s, target ${target_s}s, ratio $(echo "scale=2; $target_s / $fixed_s" | bc), load average $(cut -d' ' -f1-3 /proc/loadavg)"
done

if [ -n "${WIDTHS:-}" ] || ! "$python" -c 'import ssimulacra2' 2>/dev/null; then
  echo "no scores: WIDTHS is set, or $python has no ssimulacra2 package"
  exit 0
fi
"$python" - "$tmp" "$target" "${SSIM_REFERENCE:-}" <<'EOF'
import json, os, subprocess, sys
from ssimulacra2 import compute_ssimulacra2_with_alpha
tmp, target, reference = sys.argv[1], float(sys.argv[2]), sys.argv[3]
for fmt in ["jpg", "webp", "avif"]:
    fixed = sum(os.path.getsize(f"{tmp}/fixed/{n}") for n in os.listdir(f"{tmp}/fixed") if n.endswith("." + fmt))
    targeted = sum(os.path.getsize(f"{tmp}/target/{n}") for n in os.listdir(f"{tmp}/target") if n.endswith("." + fmt))
    print(f"{fmt}: fixed {fixed} bytes, target {targeted} bytes, ratio {targeted / fixed:.3f}")
report = json.load(open(f"{tmp}/target-report/report.json"))
chosen = {}
for item in report.get("items", []):
    for output in item.get("outputs", []):
        if output.get("path"):
            chosen[os.path.basename(output["path"])] = (output.get("quality"), output.get("ssimulacra2"))
low = []
for name in sorted(os.listdir(f"{tmp}/target")):
    stem, fmt = name.rsplit(".", 1)
    if fmt != "jpg":
        # Pillow may lack AVIF, and the reference tool reads PNG and JPEG: decode with libvips first.
        path = f"{tmp}/target-{stem}.{fmt}.png"
        subprocess.run(["vips", "copy", f"{tmp}/target/{name}", path], check=True)
    else:
        path = f"{tmp}/target/{name}"
    original = f"{tmp}/reference/{stem}.png"
    score = compute_ssimulacra2_with_alpha(original, path)
    line = f"{name}: independent {score:.2f}"
    quality, ours = chosen.get(name, (None, None))
    if ours is not None:
        line = f"{name}: quality {quality}, ours {ours:.2f}, independent {score:.2f}"
    if reference:
        line += ", reference tool " + subprocess.run([reference, original, path], capture_output=True, text=True, check=True).stdout.strip()
    print(line, flush=True)
    if score < target - 1: low.append(name)
print("files under", target - 1, "by the independent implementation:", low or "none")
EOF
