#!/usr/bin/env bash
# Benchmark: the `pipeline` CLI against a pyvips reference written the way a libvips
# expert would (Benchmarks/reference.py), on the same jobs: "standard", for every input
# a 320x320 WebP cover crop, a 1280 px JPEG and a 32 px blurred JPEG placeholder; and
# "responsive", widths 480, 960, 1440 and 1920 in AVIF q50 and WebP q75 (effort 4), never
# enlarged (one output with `widths` and `formats`), with bytes and SSIMULACRA 2 of the widest.
#
# usage: Benchmarks/run.sh [CORPUS_DIR] [--smoke] [--repeat K] [--runs N] [--jobs LIST]
#
#   CORPUS_DIR  folder of photographs (*.jpg, *.jpeg, *.png, *.webp). Default:
#               $PIPELINE_CORPUS, else ~/.cache/pipeline-bench/corpus. Fetched with
#               ../shared/corpus/fetch-corpus.sh (beside the repo) when it holds no image.
#   --smoke     only the 3 smallest images (by bytes), one run each: a quick check for CI.
#   --repeat K  the corpus K times over, as distinct hard links (r1-NAME, r2-NAME, …), so
#               that nothing coalesces: memory that grows with the number of inputs shows.
#   --runs N    runs of each tool, alternating (default 3; 1 with --smoke).
#   --jobs LIST standard, responsive, or both (default: standard,responsive). The remote and
#               re-run cases run with the standard job.
#
# Each tool runs N times, alternating, into a fresh output folder, under
# Benchmarks/measure.py. The reference runs with MALLOC_ARENA_MAX=2, as an expert would
# set it; pipeline runs with nothing set, as a user would run it. The table shows the
# run with the median wall time (its CPU time and its last-quarter average RSS) and the
# highest peak memory of the runs.
#
# Environment: PIPELINE_CORPUS (corpus folder), PIPELINE_BIN (use this binary instead
# of building one), PIPELINE_WIDTHS=D,R,E (decompress, process, encode queue widths), PYTHON (default python3), BENCH_KEEP=1 (keep the temp folder).
#
# Exit status: 0 when both tools ran, succeeded and produced the same files with the
# same pixel dimensions; 1 otherwise (including a failed `swift build`); 2 bad usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
py=${PYTHON:-python3}

usage() { sed -n '8,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

smoke=0
corpus=""
repeat=1
runs_wanted=""
jobs="standard,responsive"
expect=""
for arg in "$@"; do
  if [ -n "$expect" ]; then
    if [ "$expect" = --jobs ]; then
      case ",$arg," in *,standard,*|*,responsive,*) jobs=$arg ;; *) echo "run.sh: --jobs takes standard, responsive or both" >&2; exit 2 ;; esac
      expect=""
      continue
    fi
    case $arg in ''|*[!0-9]*|0) echo "run.sh: $expect needs a positive whole number" >&2; exit 2 ;; esac
    if [ "$expect" = --repeat ]; then repeat=$arg; else runs_wanted=$arg; fi
    expect=""
    continue
  fi
  case $arg in
    --smoke) smoke=1 ;;
    --repeat|--runs|--jobs) expect=$arg ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option $arg" >&2; usage >&2; exit 2 ;;
    *)
      if [ -n "$corpus" ]; then echo "run.sh: one CORPUS_DIR only" >&2; usage >&2; exit 2; fi
      corpus=$arg ;;
  esac
done
if [ -n "$expect" ]; then echo "run.sh: $expect needs a number" >&2; exit 2; fi
corpus=${corpus:-${PIPELINE_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/pipeline-bench/corpus}}

# The inputs, as the pipeline's globs see them (case-sensitive, top level only), sorted by name.
list_images() {
  find "$1" -maxdepth 1 -type f \( -name '*.jpg' -o -name '*.jpeg' -o -name '*.png' -o -name '*.webp' -o -name '*.tif' -o -name '*.tiff' \) \
    -printf '%f\n' 2>/dev/null | LC_ALL=C sort
}

# --- corpus ---------------------------------------------------------------------------
if [ -z "$(list_images "$corpus")" ]; then
  fetch="$repo/../shared/corpus/fetch-corpus.sh"
  if [ ! -f "$fetch" ]; then
    echo "run.sh: no images in $corpus, and no $fetch to fetch them with" >&2
    exit 1
  fi
  echo "== fetching the corpus into $corpus"
  bash "$fetch" "$corpus"
fi
corpus=$(cd "$corpus" && pwd)

# --- tools ----------------------------------------------------------------------------
if ! "$py" -c 'import pyvips' 2>/dev/null; then
  echo "== installing pyvips (pip)"
  export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
  "$py" -m pip install --quiet pyvips ||
    "$py" -m pip install --quiet --break-system-packages pyvips
  "$py" -c 'import pyvips' || { echo "run.sh: pyvips does not import after installing it" >&2; exit 1; }
fi
if ! command -v vipsheader >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing libvips-tools (for vipsheader)"
    apt-get install -y -qq libvips-tools >/dev/null ||
      { apt-get update -qq >/dev/null && apt-get install -y -qq libvips-tools >/dev/null; }
  fi
  command -v vipsheader >/dev/null || { echo "run.sh: vipsheader not found (apt-get install libvips-tools)" >&2; exit 1; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pipeline-bench.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
  echo "== keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi

# --- inputs ---------------------------------------------------------------------------
if [ "$smoke" = 1 ]; then
  input="$tmp/input"
  mkdir -p "$input"
  list_images "$corpus" | while IFS= read -r name; do printf '%s\t%s\n' "$(stat -c %s "$corpus/$name")" "$name"; done |
    LC_ALL=C sort -k1,1n -k2 | sed -n 1,3p | cut -f2- | while IFS= read -r name; do cp "$corpus/$name" "$input/"; done
  runs=1
else
  input=$corpus
  runs=3
fi
runs=${runs_wanted:-$runs}
if [ "$repeat" -gt 1 ]; then
  # Distinct files: hard links (copies where the temporary folder is on another file system).
  # Not symbolic links, which the runner rightly coalesces by real path, as it does repeated
  # listings; a hard link is a path of its own, read and made as another input.
  repeated="$tmp/input-x$repeat"
  mkdir -p "$repeated"
  for k in $(seq 1 "$repeat"); do
    list_images "$input" | while IFS= read -r name; do
      ln "$input/$name" "$repeated/r$k-$name" 2>/dev/null || cp "$input/$name" "$repeated/r$k-$name"
    done
  done
  input=$repeated
fi
count=$(list_images "$input" | wc -l)
mb=$(du -smL "$input" | cut -f1)
echo "== inputs: $count images, $mb MB in $input"
cat "$input"/* >/dev/null  # warm the page cache, so that neither tool pays for the first read

# --- build ----------------------------------------------------------------------------
status=0
bin=""
swift_version=""
if [ -n "${PIPELINE_BIN:-}" ]; then
  bin=$PIPELINE_BIN
  echo "== using PIPELINE_BIN=$bin"
elif ! command -v swift >/dev/null; then
  echo "== SKIPPING the pipeline: swift is not installed" >&2
  status=1
else
  echo "== swift build -c release --product pipeline (log: $tmp/build.log)"
  if (cd "$repo" && swift build -c release --product pipeline) >"$tmp/build.log" 2>&1; then
    bin="$(cd "$repo" && swift build -c release --show-bin-path)/pipeline"
  else
    echo "== SKIPPING the pipeline: swift build failed; the end of its log:" >&2
    tail -n 30 "$tmp/build.log" | sed 's/^/   /' >&2
    status=1
  fi
  swift_version=$(swift --version 2>/dev/null | head -n 1 || true)
fi
if [ -n "$bin" ] && [ ! -x "$bin" ]; then
  echo "== SKIPPING the pipeline: $bin is not an executable file" >&2
  bin=""
  status=1
fi

# The pipeline file: the standard job, reading the inputs by absolute globs and writing
# into out/ beside itself (relative output paths resolve against the file's folder).
# Only the globs that match a file are listed: a glob that matches nothing may rightly
# be an error for the pipeline, and leaving it out changes nothing else.
write_pipeline_file() {
  "$py" - "$input" "$1" "${2:-}" <<'PY'
import glob, json, os, sys
inputs, dest, url_list = sys.argv[1], sys.argv[2], sys.argv[3]
globs = [f"{inputs}/*.{ext}" for ext in ("jpg", "jpeg", "png", "webp", "tif", "tiff")]
job = {
    "version": 1,
    "name": "standard",
    "inputs": [g for g in globs if glob.glob(glob.escape(inputs) + g[len(inputs):])],
    # Stage widths are pipeline's defaults unless PIPELINE_WIDTHS says "D,R,E". Pixels and
    # file sizes are not limited (the reference has no limit), so a gigapixel corpus runs too.
    "decompress": {"maxPixels": 2_000_000_000},
    "fetch": {"maxBytes": "10GB"},
    "outputs": [
        {"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}],
         "encode": {"format": "webp", "quality": 80}, "path": "out/{stem}-{ext}-small.webp"},
        {"name": "large", "steps": [{"resize": {"width": 1280, "height": 1280, "fit": "inside", "withoutEnlargement": True}}],
         "encode": {"format": "jpeg", "quality": 85, "strip": True}, "path": "out/{stem}-{ext}-large.jpg"},
        {"name": "placeholder", "steps": [{"resize": {"width": 32}}, {"blur": {"sigma": 2}}],
         "encode": {"format": "jpeg", "quality": 60}, "path": "out/{stem}-{ext}-placeholder.jpg"},
    ],
}
if url_list:
    # The remote case: the same images over HTTP, fetched every time (no cache).
    job["inputs"] = [{"list": url_list}]
    job["cache"] = {"enabled": False}
widths = os.environ.get("PIPELINE_WIDTHS")
if widths:
    d, r, e = (int(w) for w in widths.split(","))
    job["decompress"]["concurrency"] = d
    job["process"] = {"concurrency": r}
    job["encode"] = {"concurrency": e}
with open(dest, "w") as f:
    json.dump(job, f, indent=2)
    f.write("\n")
PY
}

# The responsive job's pipeline file: one output with widths and formats, the same inputs.
write_responsive_file() {
  write_pipeline_file "$1"
  "$py" - "$1" <<'PY'
import json, sys
path = sys.argv[1]
job = json.load(open(path))
job["name"] = "responsive"
job["outputs"] = [
    {"name": "responsive", "widths": [480, 960, 1440, 1920],
     "formats": [{"format": "avif", "quality": 50, "effort": 4}, {"format": "webp", "quality": 75, "effort": 4}],
     "path": "out/{stem}-{ext}-{width}.{format}"},
]
with open(path, "w") as f:
    json.dump(job, f, indent=2)
    f.write("\n")
PY
}
has_job() { case ",$jobs," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# --- runs -----------------------------------------------------------------------------
# measure NAME RUN OUTDIR CMD...: one measured run; its figures go to $tmp/NAME-RUN.json.
# The reference gets MALLOC_ARENA_MAX=2 (what an expert sets for libvips on glibc); pipeline
# gets nothing, since its users should not have to know.
measure() {
  local name=$1 run=$2 out=$3
  shift 3
  local arenas=()
  case $name in reference*) arenas=(MALLOC_ARENA_MAX=2) ;; esac
  if env "${arenas[@]}" "$py" "$here/measure.py" --label "$name #$run" --log "$tmp/$name-$run.log" \
       --json "$tmp/$name-$run.json" -- "$@" | sed -n '1s/^/   /p'; then :; fi
  local code
  code=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$tmp/$name-$run.json" 2>/dev/null || echo 127)
  if [ "$code" != 0 ]; then
    echo "== $name #$run FAILED (exit $code); the end of its output:" >&2
    tail -n 20 "$tmp/$name-$run.log" | sed 's/^/   /' >&2
    return 1
  fi
  [ -d "$out" ] || { echo "== $name #$run wrote no $out" >&2; return 1; }
}

ref_ok=0
pipe_ok=0
if has_job standard; then
  echo "== standard job: running ($runs run(s) each, alternating; MALLOC_ARENA_MAX=2 for the reference only)"
  ref_ok=1
  pipe_ok=$([ -n "$bin" ] && echo 1 || echo 0)
  for run in $(seq 1 "$runs"); do
    measure reference "$run" "$tmp/reference-$run" \
      "$py" "$here/reference.py" "$input" "$tmp/reference-$run" || { ref_ok=0; status=1; }
    if [ "$pipe_ok" = 1 ]; then
      mkdir -p "$tmp/pipeline-$run"
      write_pipeline_file "$tmp/pipeline-$run/standard.json"
      measure pipeline "$run" "$tmp/pipeline-$run/out" \
        "$bin" run "$tmp/pipeline-$run/standard.json" || { pipe_ok=0; status=1; }
    fi
  done
fi

# --- responsive job: 4 widths x 2 formats, never enlarged ---------------------------------
# Its widest files are scored with SSIMULACRA 2 by an implementation independent of the
# pipeline's: $SSIMULACRA2, else `ssimulacra2` on the PATH, else the one built in /tmp/ssim2.
rref_ok=0
rpipe_ok=0
if has_job responsive; then
  echo "== responsive job: running ($runs run(s) each, alternating)"
  rref_ok=1
  rpipe_ok=$([ -n "$bin" ] && echo 1 || echo 0)
  for run in $(seq 1 "$runs"); do
    measure reference-responsive "$run" "$tmp/reference-responsive-$run" \
      "$py" "$here/reference.py" --job responsive "$input" "$tmp/reference-responsive-$run" || { rref_ok=0; status=1; }
    if [ "$rpipe_ok" = 1 ]; then
      mkdir -p "$tmp/pipeline-responsive-$run"
      write_responsive_file "$tmp/pipeline-responsive-$run/responsive.json"
      measure pipeline-responsive "$run" "$tmp/pipeline-responsive-$run/out" \
        "$bin" run "$tmp/pipeline-responsive-$run/responsive.json" || { rpipe_ok=0; status=1; }
    fi
  done
fi

# --- remote case: the same job over HTTP on loopback, 20 ms added to every request ------
remote_ok=0
if [ "$pipe_ok" = 1 ]; then
  "$py" "$here/serve.py" "$input" --latency 0.02 > "$tmp/serve.port" &
  server_pid=$!
  for _ in $(seq 50); do [ -s "$tmp/serve.port" ] && break; sleep 0.1; done
  port=$(head -n1 "$tmp/serve.port")
  list_images "$input" | sed "s|^|http://127.0.0.1:$port/|" > "$tmp/urls.txt"
  echo "== remote case: $count images from http://127.0.0.1:$port with 20 ms latency per request"
  remote_ok=1
  for run in $(seq 1 "$runs"); do
    mkdir -p "$tmp/remote-$run"
    write_pipeline_file "$tmp/remote-$run/standard.json" "$tmp/urls.txt"
    measure remote "$run" "$tmp/remote-$run/out" \
      "$bin" run "$tmp/remote-$run/standard.json" || { remote_ok=0; status=1; }
  done
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  if [ "$remote_ok" = 1 ] && ! diff <(cd "$tmp/pipeline-1/out" && ls) <(cd "$tmp/remote-1/out" && ls) >/dev/null; then
    echo "== the remote run wrote other files than the local one" >&2
    remote_ok=0; status=1
  fi
fi

# --- re-run case: an unchanged job of many inputs, run again (incremental runs) --------
rerun_line=""
if [ "$pipe_ok" = 1 ]; then
  copies=$([ "$smoke" = 1 ] && echo 100 || echo 1000)
  mkdir -p "$tmp/rerun/in"
  # sed reads the whole list: head would stop reading early, and the list's writer, killed by
  # SIGPIPE, would end the script under pipefail (it did with --repeat 8's 336 names).
  first_image=$(list_images "$input" | sed -n 1p)
  vips thumbnail "$input/$first_image" "$tmp/rerun/seed.jpg" 320 >/dev/null
  for i in $(seq -w 1 "$copies"); do cp "$tmp/rerun/seed.jpg" "$tmp/rerun/in/photo-$i.jpg"; done
  write_pipeline_file "$tmp/rerun/standard.json"
  "$py" - "$tmp/rerun/standard.json" <<'PY'
import json, sys
path = sys.argv[1]
job = json.load(open(path))
job["inputs"] = ["in/*.jpg"]
json.dump(job, open(path, "w"), indent=2)
PY
  echo "== re-run case: $copies inputs, run once, then again unchanged"
  if "$bin" run --quiet "$tmp/rerun/standard.json" && \
     "$py" "$here/measure.py" --label "re-run" --json "$tmp/rerun.json" -- \
       "$bin" run --quiet "$tmp/rerun/standard.json" | sed -n '1s/^/   /p'; then
    rerun_line=$("$py" - "$tmp/rerun.json" "$copies" <<'PY'
import json, sys
r, n = json.load(open(sys.argv[1])), int(sys.argv[2])
wall, cpu = r["wall_s"], r["cpu_s"]
print(f"re-run, nothing changed: {n} inputs in {wall:.2f} s wall, {cpu:.2f} s CPU ({wall * 1000 / n:.2f} s per 1000 inputs)")
PY
)
  else
    echo "== the re-run case failed" >&2; status=1
  fi
fi

# --- same files, same pixel dimensions --------------------------------------------------
# compare_outputs JOB COUNT_PER_INPUT REFERENCE_DIR [PIPELINE_DIR]: the reference wrote COUNT
# files per input (0: any number, as the responsive job's depend on the widths), and pipeline
# the same names at the same pixel dimensions.
compare_outputs() {
  "$py" - "$count" "$@" <<'PY'
import os, re, subprocess, sys

count, job, per_input, dirs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]
line_re = re.compile(r"^(.*): (\d+)x(\d+) ")

def listing(d):
    """file name -> 'WxH', or 'unreadable' when vipsheader cannot read it."""
    names = sorted(os.listdir(d))
    found = {}
    if names:
        p = subprocess.run(["vipsheader", *names], cwd=d, capture_output=True, text=True)
        for line in p.stdout.splitlines():
            m = line_re.match(line)
            if m:
                found[m.group(1)] = f"{m.group(2)}x{m.group(3)}"
    return {n: found.get(n, "unreadable") for n in names}

ref = listing(dirs[0])
ok = True
if per_input and len(ref) != per_input * count:
    print(f"== {job}: reference wrote {len(ref)} files, expected {per_input * count}")
    ok = False
if not ref:
    print(f"== {job}: reference wrote no files")
    ok = False
if len(dirs) > 1:
    pipe = listing(dirs[1])
    problems = []
    # The reference makes a set's narrower widths from its widest copy, whose height is rounded
    # already; the pipeline takes each height from the input's own proportions, as a resize of
    # the input does. Those heights may differ by a pixel, and are counted apart.
    rounded = 0
    for n in sorted(set(ref) | set(pipe)):
        a, b = ref.get(n, "missing"), pipe.get(n, "missing")
        if job == "responsive" and "x" in a and "x" in b:
            (aw, ah), (bw, bh) = (map(int, a.split("x")), map(int, b.split("x")))
            if aw == bw and abs(ah - bh) == 1:
                rounded += 1
                continue
        if a != b or a == "unreadable":
            problems.append(f"   {n}: reference {a}, pipeline {b}")
    if rounded:
        print(f"== {job}: {rounded} files a pixel apart in height, the reference's height rounded from its widest copy")
    if problems:
        ok = False
        print(f"== {job}: outputs DIFFER ({len(problems)} files):")
        print("\n".join(problems[:30]))
        if len(problems) > 30:
            print(f"   ... and {len(problems) - 30} more")
    else:
        print(f"== {job}: outputs match: {len(ref)} files, same names and pixel dimensions")
sys.exit(0 if ok else 1)
PY
}
if [ "$ref_ok" = 1 ]; then
  check_dirs=("$tmp/reference-1")
  [ "$pipe_ok" = 1 ] && check_dirs+=("$tmp/pipeline-1/out")
  compare_outputs standard 3 "${check_dirs[@]}" || status=1
fi
if [ "$rref_ok" = 1 ]; then
  check_dirs=("$tmp/reference-responsive-1")
  [ "$rpipe_ok" = 1 ] && check_dirs+=("$tmp/pipeline-responsive-1/out")
  compare_outputs responsive 0 "${check_dirs[@]}" || status=1
fi

# --- responsive job: bytes, and SSIMULACRA 2 of the widest files --------------------------
# Each tool's widest AVIF and WebP of every input is scored against a lossless PNG of the same
# resized image (libvips' thumbnail to that width, as the reference resizes); the figures go to
# $tmp/responsive-quality.txt for the table.
ssim2=${SSIMULACRA2:-$(command -v ssimulacra2 || true)}
[ -z "$ssim2" ] && [ -x /tmp/ssim2/build/ssimulacra2 ] && ssim2=/tmp/ssim2/build/ssimulacra2
if [ "$rref_ok" = 1 ] || [ "$rpipe_ok" = 1 ]; then
  echo "== responsive job: bytes and SSIMULACRA 2 of the widest files (${ssim2:-no ssimulacra2 found: scores skipped})"
  "$py" - "$tmp" "$input" "${ssim2:-}" "$rref_ok" "$rpipe_ok" > "$tmp/responsive-quality.txt" <<'PY' || status=1
import os, re, subprocess, sys

tmp, inputs, ssim2, rref_ok, rpipe_ok = sys.argv[1:]
tools = []
if rref_ok == "1": tools.append(("reference (pyvips)", os.path.join(tmp, "reference-responsive-1")))
if rpipe_ok == "1": tools.append(("pipeline", os.path.join(tmp, "pipeline-responsive-1", "out")))
name_re = re.compile(r"^(.*)-(\d+)\.(avif|webp)$")
scratch = os.path.join(tmp, "scores")
os.makedirs(scratch, exist_ok=True)
references = {}

def reference_png(stem_ext, width):
    """The lossless PNG of the input resized to `width` (libvips' thumbnail, never enlarged)."""
    key = (stem_ext, width)
    if key not in references:
        stem, ext = stem_ext.rsplit("-", 1)
        source = os.path.join(inputs, f"{stem}.{ext}")
        png = os.path.join(scratch, f"{stem_ext}-{width}.png")
        subprocess.run(["vips", "thumbnail", source, png, str(width), "--height", "10000000", "--size", "down"],
                       check=True, capture_output=True)
        references[key] = png
    return references[key]

def score(original, encoded):
    decoded = os.path.join(scratch, "decoded.png")
    subprocess.run(["vips", "copy", encoded, decoded], check=True, capture_output=True)
    out = subprocess.run([ssim2, original, decoded], check=True, capture_output=True, text=True).stdout.split()
    return float(out[-1])

for label, folder in tools:
    names = sorted(os.listdir(folder))
    total = {"avif": 0, "webp": 0}
    widest = {}
    for n in names:
        m = name_re.match(n)
        if not m:
            continue
        stem_ext, width, fmt = m.group(1), int(m.group(2)), m.group(3)
        total[fmt] += os.path.getsize(os.path.join(folder, n))
        if width > widest.get((stem_ext, fmt), (0, ""))[0]:
            widest[(stem_ext, fmt)] = (width, n)
    scores = {"avif": [], "webp": []}
    if ssim2:
        for (stem_ext, fmt), (width, n) in sorted(widest.items()):
            scores[fmt].append(score(reference_png(stem_ext, width), os.path.join(folder, n)))
    mean = {f: (sum(v) / len(v) if v else float("nan")) for f, v in scores.items()}
    print(f"{label}\t{total['avif']}\t{total['webp']}\t{mean['avif']:.3f}\t{mean['webp']:.3f}\t{len(scores['avif'])}")
PY
fi

# --- table ----------------------------------------------------------------------------
cpu_model=$(grep -m1 -E '^(model name|Model|cpu model)' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
vips_version=$(pkg-config --modversion vips 2>/dev/null || vips --version 2>/dev/null || echo unknown)
"$py" - "$tmp" "$runs" "$count" "$mb" "$(nproc)" "${cpu_model:-unknown}" "$vips_version" \
  "$swift_version" "$ref_ok" "$pipe_ok" "$remote_ok" "$rref_ok" "$rpipe_ok" <<'PY'
import json, os, sys

tmp, runs, count, mb, ncpu, cpu, vips, swift, ref_ok, pipe_ok, remote_ok, rref_ok, rpipe_ok = sys.argv[1:]
runs, count = int(runs), int(count)

def summary(name):
    results = []
    for r in range(1, runs + 1):
        path = os.path.join(tmp, f"{name}-{r}.json")
        if os.path.exists(path):
            with open(path) as f:
                results.append(json.load(f))
    if not results or any(r["exit_code"] != 0 for r in results):
        return None
    median = sorted(results, key=lambda r: r["wall_s"])[(len(results) - 1) // 2]
    return {"wall": median["wall_s"], "cpu": median["cpu_s"],
            "peak": max(r["peak_rss_mib"] for r in results),
            "last": median.get("last_quarter_avg_rss_mib", float("nan")),
            "ips": count / median["wall_s"] if median["wall_s"] > 0 else float("nan")}

rows = [("reference (pyvips)", summary("reference") if ref_ok == "1" else None),
        ("pipeline", summary("pipeline") if pipe_ok == "1" else None),
        ("pipeline, remote", summary("remote") if remote_ok == "1" else None)]
responsive = [("reference (pyvips)", summary("reference-responsive") if rref_ok == "1" else None),
              ("pipeline", summary("pipeline-responsive") if rpipe_ok == "1" else None)]

def table(title, rows):
    print()
    print(f"{title:28} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9} {'last¼ MiB':>10} {'images/s':>9}")
    for label, s in rows:
        if s:
            print(f"{label:28} {s['wall']:8.2f} {s['cpu']:8.2f} {s['peak']:9.1f} {s['last']:10.1f} {s['ips']:9.2f}")
        else:
            print(f"{label:28} {'(no result)':>8}")
    ref, pipe = rows[0][1], rows[1][1]
    if ref and pipe:
        print(f"{'pipeline/reference:':28} wall {pipe['wall'] / ref['wall']:.2f}x, "
              f"peak memory {pipe['peak'] / ref['peak']:.2f}x")

if ref_ok == "1" or pipe_ok == "1":
    table("standard job", rows)
if rref_ok == "1" or rpipe_ok == "1":
    table("responsive job (4 widths x 2)", responsive)
    quality_path = os.path.join(tmp, "responsive-quality.txt")
    quality = {}
    if os.path.exists(quality_path):
        for line in open(quality_path).read().splitlines():
            label, avif, webp, savif, swebp, scored = line.split("\t")
            quality[label] = (int(avif), int(webp), float(savif), float(swebp), int(scored))
    if quality:
        print()
        print(f"{'responsive job: outputs':28} {'AVIF MB':>8} {'WebP MB':>8} {'all MB':>8} {'SSIM2 AVIF':>11} {'SSIM2 WebP':>11}")
        for label, (avif, webp, savif, swebp, scored) in quality.items():
            print(f"{label:28} {avif / 1e6:8.2f} {webp / 1e6:8.2f} {(avif + webp) / 1e6:8.2f} {savif:11.2f} {swebp:11.2f}")
        print("(SSIMULACRA 2: mean over each input's widest file of the format, against a lossless PNG of the same resize)")
        ref, pipe = quality.get("reference (pyvips)"), quality.get("pipeline")
        rref, rpipe = responsive[0][1], responsive[1][1]
        if ref and pipe and rref and rpipe:
            wall = rpipe["wall"] / rref["wall"]
            size = (pipe[0] + pipe[1]) / (ref[0] + ref[1])
            worst = min(pipe[2] - ref[2], pipe[3] - ref[3])
            met = wall <= 0.6 and size <= 1.0 and worst >= -1.0
            print(f"{'pipeline/reference:':28} wall {wall:.2f}x, bytes {size:.3f}x, SSIMULACRA 2 AVIF {pipe[2] - ref[2]:+.2f}, "
                  f"WebP {pipe[3] - ref[3]:+.2f}")
            print(f"goal (wall <= 0.6x, bytes <= 1.0x, SSIMULACRA 2 within 1 point): {'MET' if met else 'NOT MET'}")
pipe = rows[1][1]
remote = rows[2][1]
if pipe and remote:
    print(f"remote/local:        wall {remote['wall'] / pipe['wall']:.2f}x "
          f"(HTTP on loopback, 20 ms added per request, no cache)")
print(f"({count} images, {mb} MB; median wall time of {runs} alternating run(s) with its CPU time and "
      f"its last-quarter average RSS; highest peak of the runs; peak = summed RSS of the process tree)")
print(f"machine: {ncpu} cores, {cpu}, libvips {vips}" + (f", {swift}" if swift else ""))
PY

[ -n "$rerun_line" ] && echo "$rerun_line"
if [ "$status" != 0 ]; then
  echo "== FAILED (see the messages above)" >&2
fi
exit "$status"
