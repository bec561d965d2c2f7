#!/usr/bin/env bash
# Builds docs/writing-a-plugin.md as a third party would: every fenced block of the guide that is
# preceded by `<!-- file: PATH -->` is written to PATH in a new package in a temporary folder
# (blocks naming one path are joined in order), the pipeline dependency is pointed at this
# checkout by path (the guide's URL cannot be resolved here), and the package is built and its
# command run on a bundled sample image: its step listed by `plugins` and `schema`, a misspelt
# step refused with a suggestion, and every output made. Fails when a Swift block names no file (it would not be
# compiled), when the build or the guide's tests fail, or when the command does not make every
# output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
guide="$root/docs/writing-a-plugin.md"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
package="$work/BorderPipeline"
mkdir -p "$package"

python3 - "$guide" "$package" <<'EOF'
import os, re, sys
guide, package = sys.argv[1], sys.argv[2]
lines = open(guide, encoding="utf-8").read().split("\n")
files, pending, block, language, path = {}, None, None, None, None
for number, line in enumerate(lines, 1):
    if block is None:
        marker = re.fullmatch(r"<!-- file: (\S+) -->", line.strip())
        if marker:
            pending = marker.group(1)
            continue
        fence = re.fullmatch(r"```(\w*)", line.strip())
        if fence:
            block, language, path, pending = [], fence.group(1), pending, None
            if language == "swift" and path is None:
                sys.exit(f"{guide}:{number}: a Swift block without a `<!-- file: PATH -->` line above it would not be compiled")
            continue
        if line.strip():
            pending = None
    elif line.strip() == "```":
        if path is not None:
            files.setdefault(path, []).append("\n".join(block))
        block = None
    else:
        block.append(line)
if block is not None:
    sys.exit(f"{guide}: a code block is not closed")
if "Package.swift" not in files:
    sys.exit(f"{guide}: no Package.swift block")
for path, parts in files.items():
    if os.path.isabs(path) or ".." in path.split("/"):
        sys.exit(f"{guide}: {path} is not a path inside the package")
    target = os.path.join(package, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(parts) + "\n")
    print(f"plugin guide: wrote {path} ({len(parts)} block{'s' if len(parts) > 1 else ''})")
EOF

# The guide names the repository by URL and version, as a user's package would.
url_line='.package(url: "https://github.com/pipeline/pipeline", from: "0.4.0")'
grep -qF "$url_line" "$package/Package.swift" || { echo "the guide's Package.swift does not name $url_line" >&2; exit 1; }
python3 - "$package/Package.swift" "$url_line" "$root" <<'EOF'
import json, sys
path, url_line, root = sys.argv[1:]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace(url_line, f'.package(name: "pipeline", path: {json.dumps(root)})'))
EOF

cd "$package"
mkdir -p photos
cp "$root/Pipelines/samples/dune.jpg" photos/
# In the build folder of this checkout's tests, with their options (the Makefile's TEST_BUILD):
# the package and its tests are the guide's own, and the pipeline modules and their
# dependencies `make test` has compiled are not compiled a second time. `swift test` would add
# its own -enable-testing to every module's command (TEST_OPTIONS has one), and so compile them
# all again. A ThreadSanitizer build's processes skip its pause of a second at exit.
read -ra build <<< "$(make -C "$root" -s print-TEST_OPTIONS)"
build+=(--scratch-path "$root/$(make -C "$root" -s print-TEST_SCRATCH)")
export TSAN_OPTIONS=atexit_sleep_ms=0
swift build "${build[@]}"
swift test "${build[@]}" --disable-testable-imports
bin="$(swift build "${build[@]}" --show-bin-path)/border-pipeline"
"$bin" --help | grep -q 'USAGE: border-pipeline <subcommand>' || { echo "border-pipeline --help does not call it border-pipeline" >&2; exit 1; }
plugins=$("$bin" plugins)
grep -q '^border: ' <<< "$plugins" || { echo "border missing from plugins" >&2; echo "$plugins" >&2; exit 1; }
schema=$("$bin" schema)
grep -q '"border"' <<< "$schema" || { echo "border missing from schema" >&2; exit 1; }
"$bin" validate border.json
# A misspelt step is refused with exit 2 and the name the user probably meant.
sed 's/"border": {/"bordr": {/' border.json > misspelt.json
set +e
"$bin" validate misspelt.json 2> misspelt.errors
status=$?
set -e
[ "$status" = 2 ] && grep -q 'did you mean "border"' misspelt.errors \
  || { echo "a misspelt step should exit 2 with a suggestion (got $status)" >&2; cat misspelt.errors >&2; exit 1; }
"$bin" run --quiet border.json
framed=$(vipsheader -f width out/dune-framed.webp)
mirrored=$(vipsheader -f width out/dune-mirrored.jpg)
[ "$framed" = 504 ] && [ "$mirrored" = 368 ] \
  || { echo "expected a 504-wide framed and a 368-wide mirrored output, got $framed and $mirrored" >&2; exit 1; }
echo "plugin guide: border-pipeline built from the guide's blocks and made its outputs"
