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
