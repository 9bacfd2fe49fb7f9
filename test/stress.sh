#!/usr/bin/env bash
# Finds flakes before CI does: runs the test suite N times under the race
# detector while CPU-bound busy loops compete for the cores, then prints
# each failing test with how many runs it failed in.
#
#   bash test/stress.sh N [package ...]        # default: ./...
#   STRESS_BUSY=2 STRESS_FLAGS='-count=5 -run TestX' bash test/stress.sh 3 ./test
#
# STRESS_BUSY is the number of busy loops (default 2, one per core here);
# STRESS_FLAGS is added to every go test. Logs go to $STRESS_DIR (default a
# fresh temporary directory), one file per run. Exits non-zero when any run
# failed. The -timeout below is the runner's guard against a hung binary,
# not a bound any test states.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:?usage: bash test/stress.sh N [package ...]}
shift
pkgs=("$@")
((${#pkgs[@]})) || pkgs=(./...)
busy=${STRESS_BUSY:-2}
dir=${STRESS_DIR:-$(mktemp -d -t ptyactor-stress.XXXXXX)}
mkdir -p "$dir"

source test/deps.sh

# Busy loops: plain shell loops, each its own process group so the trap
# ends them and nothing else.
loops=()
stop_loops() {
  local pid
  for pid in "${loops[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null || true; done
  loops=()
}
trap stop_loops EXIT INT TERM
for ((i = 0; i < busy; i++)); do
  setsid bash -c 'while :; do :; done' &
  loops+=("$!")
done

# Build once before the clock starts, so run 1 is not also the compile.
go test -race -count=1 -run '^$' "${pkgs[@]}" >/dev/null

declare -A fails=()
failed_runs=0
total_start=$SECONDS
for ((r = 1; r <= runs; r++)); do
  log="$dir/run-$r.log"
  start=$SECONDS
  status=0
  # shellcheck disable=SC2086 # STRESS_FLAGS is a list of flags
  GODEBUG=execwait=2 go test -race -count=1 -timeout 30m ${STRESS_FLAGS:-} "${pkgs[@]}" >"$log" 2>&1 || status=$?
  took=$((SECONDS - start))
  # Failed tests (subtests included), and packages that failed without a
  # failing test (a panic, a timeout, a leak found by TestMain).
  names=$(grep -oE '^[[:space:]]*--- FAIL: [^ ]+' "$log" | awk '{print $3}' | sort -u || true)
  if [ -z "$names" ] && ((status != 0)); then
    names=$(grep -oE '^FAIL[[:space:]]+[^ ]+' "$log" | awk '{print "package " $2}' | sort -u || true)
    [ -n "$names" ] || names="go-test-exit-$status"
  fi
  if [ -n "$names" ]; then
    failed_runs=$((failed_runs + 1))
    while read -r n; do fails[$n]=$((${fails[$n]:-0} + 1)); done <<<"$names"
    echo "run $r/$runs: FAIL in ${took}s ($(echo "$names" | wc -l) failing; log $log)"
  else
    echo "run $r/$runs: ok in ${took}s"
  fi
done

echo "stress: $runs runs, $busy busy loops, $((SECONDS - total_start))s, $failed_runs failed; logs in $dir"
for n in "${!fails[@]}"; do printf '  %3d  %s\n' "${fails[$n]}" "$n"; done | sort -rn
((failed_runs == 0))
