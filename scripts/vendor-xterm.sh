#!/usr/bin/env bash
# Vendors xterm.js for the live view (view/assets): fetches the pinned
# @xterm/xterm from npm with `npm pack` (which checks the tarball against
# the registry's integrity hash), keeps only what the page loads (the ES
# module bundle, its stylesheet) and the license, and writes VERSION and
# SHA256SUMS. view/assets's TestVendorSums holds the embedded files to
# SHA256SUMS, so a vendored file is changed only by running this again.
#
#   bash scripts/vendor-xterm.sh            # the pinned version
#   bash scripts/vendor-xterm.sh 6.0.1      # move the pin
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-6.0.0}"
dest=view/assets/vendor/xterm

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent --loglevel=error "@xterm/xterm@$version" >/dev/null)
tar -xzf "$tmp/xterm-xterm-$version.tgz" -C "$tmp"

rm -rf "$dest"
mkdir -p "$dest"
cp "$tmp/package/lib/xterm.mjs" "$dest/xterm.mjs"
cp "$tmp/package/css/xterm.css" "$dest/xterm.css"
cp "$tmp/package/LICENSE" "$dest/LICENSE"
echo "$version" >"$dest/VERSION"
(cd "$dest" && sha256sum LICENSE VERSION xterm.css xterm.mjs >SHA256SUMS)
echo "vendored @xterm/xterm $version in $dest"
