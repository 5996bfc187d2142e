#!/usr/bin/env bash
# Re-fetches the vendored asciinema-player (the lesson page's player,
# `mk-tui export FILE --html DIR`, docs/lesson-page.md) from the npm
# registry and checks it against the pins: the package tarball's sha256
# and SHA256SUMS of the three files kept (the bundle, its stylesheet and
# the licence). Without --update it only compares: exit 1 when the registry's
# files differ from the ones committed here. `--offline` checks the
# committed files against SHA256SUMS without the network (CI runs it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=3.18.0
tarball_sha256=18d9703510fae9209da9e26ce3d13c59f083b4abcff003a3bba958e03918a862
files=(asciinema-player.min.js asciinema-player.css LICENSE)

if [ "${1:-}" = "--offline" ]; then
  (cd "$here" && sha256sum --quiet -c SHA256SUMS)
  echo "asciinema-player $version: the vendored files match SHA256SUMS"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "asciinema-player: npm is needed to fetch the package" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "asciinema-player@$version" >/dev/null)
tgz="$work/asciinema-player-$version.tgz"
echo "$tarball_sha256  $tgz" | sha256sum --quiet -c - ||
  { echo "asciinema-player: the registry's $version tarball is not the pinned one" >&2; exit 1; }
tar -xzf "$tgz" -C "$work"
cp "$work/package/dist/bundle/asciinema-player.min.js" "$work/package/dist/bundle/asciinema-player.css" \
  "$work/package/LICENSE" "$work/"
if [ "${1:-}" = "--update" ]; then
  for f in "${files[@]}"; do cp "$work/$f" "$here/$f"; done
  (cd "$here" && sha256sum "${files[@]}" > SHA256SUMS)
  echo "asciinema-player $version: vendored files replaced"
  exit 0
fi
(cd "$work" && sha256sum --quiet -c "$here/SHA256SUMS") ||
  { echo "asciinema-player: the fetched files differ from SHA256SUMS" >&2; exit 1; }
for f in "${files[@]}"; do
  cmp -s "$work/$f" "$here/$f" || { echo "asciinema-player: $f differs from the registry's" >&2; exit 1; }
done
echo "asciinema-player $version: the registry's files are the vendored ones"
