#!/usr/bin/env bash
# Installs the programs the tests drive when they are missing (sourced by
# test/run.sh and test/stress.sh, so both run against the same machine).
# Programs the tests drive for real. Each entry: command, Debian package.
need=(
  "bash bash"
  "python3 python3"
  "setsid util-linux"
  "node nodejs"
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
)
missing=()
for entry in "${need[@]}"; do
  set -- $entry
  command -v "$1" >/dev/null 2>&1 || missing+=("$2")
done
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
command -v go >/dev/null 2>&1 || { echo "$(basename "$0"): Go 1.26 is required (https://go.dev/dl/)" >&2; exit 1; }

