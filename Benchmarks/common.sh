# Shared by the benchmark scripts that measure one release binary: sourced, not run.

# Sets `bin` to the binary to measure: $PIPELINE_BIN, else a release build of the repository.
use_release_binary() {
  local repo=$1
  if [ -n "${PIPELINE_BIN:-}" ]; then
    bin=$PIPELINE_BIN
  else
    echo "== swift build -c release --product pipeline" >&2
    (cd "$repo" && swift build -c release --product pipeline >/dev/null)
    bin="$(cd "$repo" && swift build -c release --show-bin-path)/pipeline"
  fi
}

# Exits unless libvips' command-line tools and GNU time are installed (SCRIPT names the caller).
require_vips_and_time() {
  local script=$1
  command -v vips >/dev/null || { echo "$script: vips not found (apt-get install libvips-tools)" >&2; exit 1; }
  [ -x /usr/bin/time ] || { echo "$script: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
}

# Sets `tmp` to a new temporary folder named after PREFIX, removed at exit unless BENCH_KEEP=1.
make_bench_folder() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "== keeping $tmp" >&2; else trap 'rm -rf "$tmp"' EXIT; fi
}

# Sets `corpus` (CORPUS, else $PIPELINE_CORPUS, else the benchmark's cache) and `images` (its
# JPEG, PNG and WebP files, top level); exits 2 when there are none (SCRIPT names the caller).
find_corpus_images() {
  local script=$1
  corpus=${2:-${PIPELINE_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/pipeline-bench/corpus}}
  shopt -s nullglob
  images=("$corpus"/*.jpg "$corpus"/*.jpeg "$corpus"/*.png "$corpus"/*.webp)
  [ ${#images[@]} -gt 0 ] || { echo "$script: no images in $corpus" >&2; exit 2; }
}

# Writes the standard job (as Benchmarks/run.sh: a 320x320 WebP cover crop, a 1280 px JPEG, a
# blurred 32 px placeholder) to FILE, reading INPUT_PREFIX/*.{jpg,jpeg,png,webp} and writing
# under OUTPUT_PREFIX (a folder or s3:// prefix); no cache, no journal. Uses $PYTHON or python3.
write_standard_job() { # FILE INPUT_PREFIX OUTPUT_PREFIX
  "${PYTHON:-python3}" - "$@" <<'PY'
import json, sys
dest, source, target = sys.argv[1:4]
outputs = [
    ("small", [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], {"format": "webp", "quality": 80}, "small.webp"),
    ("large", [{"resize": {"width": 1280, "height": 1280, "fit": "inside", "withoutEnlargement": True}}],
     {"format": "jpeg", "quality": 85, "strip": True}, "large.jpg"),
    ("placeholder", [{"resize": {"width": 32}}, {"blur": {"sigma": 2}}], {"format": "jpeg", "quality": 60}, "placeholder.jpg"),
]
json.dump({"version": 1, "name": "standard", "incremental": False, "cache": {"enabled": False},
           "inputs": [f"{source}/*.{ext}" for ext in ("jpg", "jpeg", "png", "webp")], "allowEmpty": False,
           "outputs": [{"name": n, "steps": s, "encode": e, "path": f"{target}/{{stem}}-{{ext}}-{p}"} for n, s, e, p in outputs]},
          open(dest, "w"), indent=2)
PY
}
