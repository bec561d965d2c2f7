#!/usr/bin/env bash
# Builds the DocC catalogs of PipelineKit and Vips with the toolchain's docc, from the symbol
# graphs of the debug build, into a temporary folder. Any warning (a broken symbol link, an
# article that links nowhere) fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
docc=${DOCC:-$(dirname "$(command -v swift)")/docc}
[ -x "$docc" ] || docc=$(command -v docc) || { echo "no docc beside swift or on PATH" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Extracts the public symbols of every module of the package (building it first, when needed).
swift package dump-symbol-graph --minimum-access-level public > "$work/dump.log" 2>&1 \
  || { cat "$work/dump.log" >&2; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -1)
[ -d "$graphs" ] || graphs=$(find .build -type d -name symbolgraph -path '*/.build/*' | head -1)
[ -d "$graphs" ] || { echo "no symbol graphs found" >&2; cat "$work/dump.log" >&2; exit 1; }

for module in PipelineKit Vips; do
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
