#!/usr/bin/env bash
# Builds the DocC catalogs of PipelineKit, Vips, PipelineServer and PipelineCLI with the
# toolchain's docc, from the symbol graphs of the tests' build (the Makefile's TEST_BUILD), into a
# temporary folder. Any warning (a broken symbol link, an article that links nowhere) fails the
# build.
set -euo pipefail
cd "$(dirname "$0")/.."
docc=${DOCC:-$(dirname "$(command -v swift)")/docc}
[ -x "$docc" ] || docc=$(command -v docc) || { echo "no docc beside swift or on PATH" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Extracts the public symbols of every module of the package (building it first, when needed).
# SwiftPM 6.3 also tries the test-discovery modules, which have no module file, and then exits
# non-zero after writing every other graph: what counts is that the graphs used here are new.
read -ra build <<< "$(make -s print-TEST_BUILD)"
graphs=$(make -s print-TEST_SCRATCH)/$(uname -m)-unknown-linux-gnu/symbolgraph
rm -rf "$graphs"
swift package "${build[@]}" dump-symbol-graph --minimum-access-level public > "$work/dump.log" 2>&1 || true
modules=(PipelineKit Vips PipelineServer PipelineCLI)
for module in "${modules[@]}"; do
  [ -s "$graphs/$module.symbols.json" ] \
    || { cat "$work/dump.log" >&2; echo "docc: no symbol graph for $module in $graphs" >&2; exit 1; }
done

for module in "${modules[@]}"; do
  mkdir -p "$work/graphs/$module"
  cp "$graphs/$module.symbols.json" "$work/graphs/$module/"
  "$docc" convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$work/graphs/$module" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.pipeline.$module" \
    --output-path "$work/$module.doccarchive" \
    --warnings-as-errors
  echo "docc: $module built without warnings"
done
