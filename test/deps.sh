#!/usr/bin/env bash
# Installs the programs the tests drive when they are missing (sourced by
# test/run.sh and test/stress.sh, so both run against the same machine).
# Programs the tests drive for real. Each entry: command, Debian package.
# chromium is for the browser tests of the live view's pages (test/testkit/browser.go,
# which adds --no-sandbox when it runs as root, as CI does).
need=(
  "bash bash"
  "python3 python3"
  "setsid util-linux"
  "node nodejs"
  "npm npm"
  "less less"
  "gdb gdb"
  "bc bc"
  "ed ed"
  "ssh-keygen openssh-client"
  "openssl openssl"
  "tmux tmux"
  "vim vim"
  "git git"
  "man man-db"
  "bwrap bubblewrap"
  "asciinema asciinema"
  "chromium chromium"
)
missing=()
for entry in "${need[@]}"; do
  set -- $entry
  command -v "$1" >/dev/null 2>&1 || missing+=("$2")
done
# A font with CJK glyphs (not a command): view/assets's
# TestGlyphsInBrowser draws a full-width character in the live view and
# checks its pixels.
if ! fc-list :lang=zh family 2>/dev/null | grep -q .; then
  missing+=(fonts-wqy-microhei)
fi
if ((${#missing[@]})); then
  echo "$(basename "$0"): installing ${missing[*]}" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "$(basename "$0"): missing ${missing[*]}; install them (apt-get install ${missing[*]}) and rerun" >&2
    exit 1
  fi
fi
# npm packages the tests run, each at the versions its package-lock.json
# pins: test/player, asciinema-player, for cmd/ptyrec's
# TestAsciinemaPlayerParses; test/mcpclient-ts, the TypeScript MCP SDK as
# a client, for mcpserver's TestElicitTypeScript. npm writes
# node_modules/.package-lock.json at each install: when it is missing or
# older than the lockfile, install again; otherwise this costs one stat.
for npmpkg in player mcpclient-ts; do
  npmdir="$(dirname "${BASH_SOURCE[0]}")/$npmpkg"
  if [ ! -f "$npmdir/node_modules/.package-lock.json" ] || [ "$npmdir/package-lock.json" -nt "$npmdir/node_modules/.package-lock.json" ]; then
    echo "$(basename "$0"): npm ci in $npmdir" >&2
    (cd "$npmdir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
      { echo "$(basename "$0"): npm ci failed in $npmdir" >&2; exit 1; }
  fi
done
command -v go >/dev/null 2>&1 || { echo "$(basename "$0"): Go 1.26 is required (https://go.dev/dl/)" >&2; exit 1; }

