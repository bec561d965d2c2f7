#!/usr/bin/env bash
# Makes the benchmark's second corpus: the photographs of the first, every one saved as PNG at
# its own size (libvips' default zlib level 6, no interlacing), as a site's screenshots,
# illustrations and exported photos often are. PNG cannot shrink on load, so on this corpus the
# decode (libpng and zlib) is most of the work, where on the JPEG-heavy one it is not.
#
# usage: Benchmarks/png-corpus.sh [--filtered] [CORPUS_DIR] DEST_DIR
#
#   --filtered  rows filtered as most PNG encoders write them (libpng's adaptive choice per row,
#               Paeth mostly, on photographs): smaller files, and undoing the filters is work.
#               libvips' own default writes rows unfiltered.
#   CORPUS_DIR  the photographs to convert (default: $PIPELINE_CORPUS, else the benchmark's
#               cache, as Benchmarks/run.sh finds it).
#   DEST_DIR    where the PNG files go, named STEM-EXT.png; files already there are kept, so a
#               second call costs nothing.
#
# Then: Benchmarks/run.sh DEST_DIR --jobs standard
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=Benchmarks/common.sh
. "$here/common.sh"

filter=()
if [ "${1:-}" = --filtered ]; then
  filter=(--filter all)
  shift
fi
case $# in
  1) source_dir=""; dest=$1 ;;
  2) source_dir=$1; dest=$2 ;;
  *) sed -n '7,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
command -v vips >/dev/null || { echo "png-corpus.sh: vips not found (apt-get install libvips-tools)" >&2; exit 1; }
find_corpus_images png-corpus.sh "$source_dir"
mkdir -p "$dest"

made=0
for image in "${images[@]}"; do
  name=$(basename "$image")
  target="$dest/${name%.*}-${name##*.}.png"
  [ -s "$target" ] && continue
  # Written beside the target and renamed, so an interrupted call leaves no half file.
  vips pngsave "$image" "$target.partial" "${filter[@]}"
  mv "$target.partial" "$target"
  made=$((made + 1))
done
echo "png-corpus.sh: ${#images[@]} photographs as PNG in $dest ($made made now)"
