#!/usr/bin/env bash
# CI: `make install` into a temporary prefix gives a binary that runs the bundled pipeline under a
# bare environment (the Swift runtime linked in), a man page that renders and three shell
# completions; `make uninstall` then leaves nothing behind. `make deb` gives a package that apt
# installs (as root: CI's machine is its own), that runs the same job, and that apt removes.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

started=$SECONDS
make install PREFIX="$prefix"
# From a fresh clone this time includes the release build, which the README's Install section
# states; .ci/run builds the binary beforehand and prints that build's time itself.
echo "install-check: make install took $((SECONDS - started)) s, the binary is $(du -m "$prefix/bin/pipeline" | cut -f1) MB"

installed=(bin/pipeline share/man/man1/pipeline.1 share/bash-completion/completions/pipeline
           share/zsh/site-functions/_pipeline share/fish/vendor_completions.d/pipeline.fish)
for file in "${installed[@]}"; do
  [ -s "$prefix/$file" ] || { echo "install-check: $prefix/$file is missing or empty" >&2; exit 1; }
done

# No Swift library may come from outside the binary: only the system's C libraries.
if ldd "$prefix/bin/pipeline" | grep -E 'libswift|libFoundation|libdispatch|lib_FoundationICU|not found'; then
  echo "install-check: the installed binary needs the libraries above" >&2
  exit 1
fi

# The bundled pipeline and its samples, copied, run with nothing from this environment.
mkdir "$work/job"
cp -R Pipelines/thumbnails.json Pipelines/samples "$work/job/"
(cd "$work/job" && env -i PATH=/usr/bin:/bin "$prefix/bin/pipeline" run thumbnails.json)
samples=$(find "$work/job/samples" -name '*.jpg' | wc -l)
outputs=$(find "$work/job/out" -type f \( -name '*-small.webp' -o -name '*-large.jpg' -o -name '*-placeholder.jpg' \) -size +0 | wc -l)
[ "$samples" -gt 0 ] && [ "$outputs" -eq $((samples * 3)) ] \
  || { echo "install-check: $outputs outputs for $samples samples, expected three each" >&2; exit 1; }
version=$(env -i PATH=/usr/bin:/bin "$prefix/bin/pipeline" --version)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "install-check: --version printed \"$version\"" >&2; exit 1; }

# The man page (mdoc, as swift-argument-parser writes it) renders without warnings and names the
# commands (once bold and underline, written as overstrikes, are taken out).
page=$(groff -mandoc -Tutf8 -ww -z "$prefix/share/man/man1/pipeline.1" 2>&1)
[ -z "$page" ] || { echo "install-check: groff: $page" >&2; exit 1; }
rendered=$(groff -mandoc -Tutf8 "$prefix/share/man/man1/pipeline.1" | sed 's/.\x08//g')
grep -q 'merge-reports' <<<"$rendered" || { echo "install-check: the man page names no merge-reports command" >&2; exit 1; }

# Completions: bash parses its script; zsh and fish ones name the command.
bash -n "$prefix/share/bash-completion/completions/pipeline"
grep -q '#compdef pipeline' "$prefix/share/zsh/site-functions/_pipeline"
grep -q "complete -c 'pipeline'" "$prefix/share/fish/vendor_completions.d/pipeline.fish"

make uninstall PREFIX="$prefix"
# Nothing at all: the files, and the folders install made, emptied (the prefix with them).
left=$(find "$prefix" 2>/dev/null || true)
[ -z "$left" ] || { echo "install-check: left after make uninstall: $left" >&2; exit 1; }
# A shared prefix keeps its folders, and what is above it: one that held a file and an empty
# folder of its own before the install is as it was after the uninstall.
shared="$work/shared/local"
mkdir -p "$shared/bin" "$shared/share/man"
ln -s share/man "$shared/man"
make install PREFIX="$shared" >/dev/null
make uninstall PREFIX="$shared"
[ -d "$shared/bin" ] && [ -d "$shared/share/man" ] && [ -L "$shared/man" ] && [ ! -e "$shared/bin/pipeline" ] \
  || { echo "install-check: make uninstall of a shared prefix left $(find "$work/shared")" >&2; exit 1; }

# The Debian package: built from the same binary, installed by apt with its dependencies
# declared, a job run with it from a bare environment, then removed.
make deb
deb=$(ls pipeline_*.deb)
dpkg-deb --field "$deb" Depends | grep -q libvips42 || { echo "install-check: $deb declares no libvips42" >&2; exit 1; }
apt-get install -y -qq "./$deb" >/dev/null
rm -rf "$work/job/out"
(cd "$work/job" && env -i PATH=/usr/bin:/bin pipeline run thumbnails.json)
debOutputs=$(find "$work/job/out" -type f -size +0 | wc -l)
[ "$debOutputs" -eq $((samples * 3)) ] || { echo "install-check: the package's binary made $debOutputs outputs" >&2; exit 1; }
[ -s /usr/share/man/man1/pipeline.1 ] || { echo "install-check: the package installed no man page" >&2; exit 1; }
# zsh on Debian loads a package's completions from vendor-completions, not /usr/share/zsh/site-functions.
[ -s /usr/share/zsh/vendor-completions/_pipeline ] || { echo "install-check: no zsh completion where Debian's zsh looks" >&2; exit 1; }
apt-get remove -y -qq pipeline >/dev/null
[ ! -e /usr/bin/pipeline ] || { echo "install-check: /usr/bin/pipeline is left after apt-get remove" >&2; exit 1; }
rm -f "$deb"
echo "install-check: make install, a run under env -i, the man page, completions, make uninstall and the Debian package all fine"
