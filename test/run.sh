#!/usr/bin/env bash
# The project's test command (README.md): installs what the tests run, then
# runs every test under the race detector. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

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
)
missing=()
for entry in "${need[@]}"; do
  set -- $entry
  command -v "$1" >/dev/null 2>&1 || missing+=("$2")
done
if ((${#missing[@]})); then
  echo "test/run.sh: installing ${missing[*]}" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "test/run.sh: missing ${missing[*]}; install them (apt-get install ${missing[*]}) and rerun" >&2
    exit 1
  fi
fi
command -v go >/dev/null 2>&1 || { echo "test/run.sh: Go 1.26 is required (https://go.dev/dl/)" >&2; exit 1; }

go vet ./...
# macOS has no exact tier, but the whole module, tests included, must keep
# building and vetting there (Linux-only tests carry //go:build linux).
GOOS=darwin go build ./...
GOOS=darwin GOARCH=arm64 go build ./...
GOOS=darwin go vet ./...
# execwait=2 reports any exec.Cmd that is collected without Wait: every
# process the runtime starts must be reaped.
GODEBUG=execwait=2 go test -race -count=1 -timeout 15m ./...

# Brief fuzz runs of every target, under the race detector like the rest.
# -fuzz takes one package and one target at a time. The budgets are counts,
# not durations: Go 1.26's fuzz coordinator can report a spurious "context
# deadline exceeded" when a -fuzztime duration ends mid-exec on a loaded
# machine (go.dev/issue/75804, fixed in Go 1.27). Each count is about 5 s
# here. FUZZING.md says how to run them long and records what was run.
fuzz=(
  "FuzzParser ./backend/local/termtext 6000"
  "FuzzOutputPath ./backend/local 3000"
  "FuzzPromptMarker ./backend/local 8000"
  "FuzzParseSyscall ./probes/linux 10000"
  "FuzzEpollFdinfo ./probes/linux 10000"
  "FuzzSelectWants ./probes/linux 8000"
  "FuzzPollWants ./probes/linux 8000"
  "FuzzToolArgs ./tools 200"
  "FuzzEmulator ./backend/local/vt 3000"
)
for entry in "${fuzz[@]}"; do
  set -- $entry
  go test -race -run '^$' -fuzz "^$1\$" -fuzztime "$3x" "$2"
done
