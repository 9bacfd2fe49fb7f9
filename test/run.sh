#!/usr/bin/env bash
# The project's test command (README.md): installs what the tests run, then
# runs every test under the race detector. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

source test/deps.sh

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
  "FuzzParser ./vt 6000"
  "FuzzOutputPath ./backend/local 3000"
  "FuzzPromptMarker ./backend/local 8000"
  "FuzzParseSyscall ./probes/linux 10000"
  "FuzzEpollFdinfo ./probes/linux 10000"
  "FuzzSelectWants ./probes/linux 8000"
  "FuzzPollWants ./probes/linux 8000"
  "FuzzToolArgs ./tools 200"
  "FuzzCut ./internal/textcut 20000"
  "FuzzRedact ./internal/secretshape 20000"
  "FuzzEmulator ./vt 3000"
  "FuzzVerify ./record 3000"
)
for entry in "${fuzz[@]}"; do
  set -- $entry
  go test -race -run '^$' -fuzz "^$1\$" -fuzztime "$3x" "$2"
done
