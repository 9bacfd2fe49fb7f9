#!/usr/bin/env bash
# bench/ab.sh REV: the cost of the working tree against REV, in one run.
#
# Builds the bench test binary of REV (in a detached worktree) and of the
# working tree, then runs the two alternately ROUNDS times, so a noisy
# neighbour slows both alike, and prints per benchmark and side the median
# of every metric the benchmark reports (ratio, ptyactor-median-ms, ...).
#
#   bench/ab.sh main~3
#   BENCH='^BenchmarkREPLPaired$' BENCHTIME=300x ROUNDS=5 bench/ab.sh 632899a
#
# Environment: BENCH (a -test.bench regexp; the paired echo and REPL by
# default), BENCHTIME (1000x), ROUNDS (3), KEEP=1 to keep the raw outputs.
set -euo pipefail
rev=${1:?usage: bench/ab.sh REV}
bench=${BENCH:-'^(BenchmarkSendEchoPaired|BenchmarkREPLPaired)$'}
benchtime=${BENCHTIME:-1000x}
rounds=${ROUNDS:-3}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/ab.XXXXXX)
cleanup() {
	git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true
	[ "${KEEP:-}" = 1 ] && echo "outputs kept in $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

base=$(git -C "$root" rev-parse --short "$rev")
git -C "$root" worktree add --quiet --detach "$work/base" "$base"
(cd "$work/base" && go test -c -o "$work/bench-base" ./bench/)
(cd "$root" && go test -c -o "$work/bench-new" ./bench/)

for i in $(seq "$rounds"); do
	for side in base new; do
		echo "round $i/$rounds: $side" >&2
		(cd "$root/bench" && "$work/bench-$side" -test.run '^$' -test.bench "$bench" \
			-test.benchtime "$benchtime") >>"$work/$side.out" 2>&1 || {
			echo "bench-$side failed:" >&2
			tail -20 "$work/$side.out" >&2
			exit 1
		}
	done
done

# One row per benchmark, metric and side: the median over the rounds.
summary() {
	awk -v side="$1" '/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name)
		for (i = 3; i < NF; i += 2) print name, $(i+1), side, $i
	}' "$work/$1.out"
}
echo "A/B: base $base, new $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty'); $rounds rounds of $benchtime"
printf '%-32s %-22s %12s %12s %8s\n' benchmark metric base new new/base
{ summary base; summary new; } | sort -k1,1 -k2,2 -k3,3 -k4,4g | awk '
	{ key = $1 " " $2 " " $3; v[key, ++n[key]] = $4; keys[$1 " " $2] = 1 }
	END {
		for (k in keys) {
			split(k, p, " ")
			b = med(v, n, k " base"); w = med(v, n, k " new")
			printf "%-32s %-22s %12s %12s %8s\n", p[1], p[2], b, w, (b != "-" && w != "-" && b + 0 != 0) ? sprintf("%.3f", w / b) : "-"
		}
	}
	function med(v, n, key,   c) { c = n[key]; if (!c) return "-"; return v[key, int((c + 1) / 2)] }
' | sort
