#!/bin/bash
# Runs one process benchmark and attaches a tool (strace, perf) to its
# simulator child: lab/simproc starts the simulated host as the benchmark
# binary itself, re-run with SWITCHYARD_BENCH_SIM set, so the child is
# found among the benchmark's children by that variable. The tool gets
# "-p <pid>" last and runs until the child ends. How the ZFS simulator's
# system calls per pair were counted (docs/performance.md, "ZFS simulator
# on ext4"):
#
#   go test -c -o /tmp/bench.test ./bench/ && make build
#   SWITCHYARD_BENCH_SCALE=5 bench/sim-attach.sh /tmp/bench.test 'ZFSNFSProcess/per-exec/callers=16$' strace -c -f -o /tmp/sim.strace
#   bench/sim-attach.sh /tmp/bench.test 'ZFSNFSProcess/per-exec/callers=1$' perf record -g -o /tmp/sim.data
#
# Give a pattern that names ONE benchmark: the first simulator child is
# the one attached to. SWITCHYARD_BIN defaults to bin/switchyard.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 BENCH.test PATTERN TOOL [ARGS...]" >&2; exit 2; }
bin=$(realpath "$1")
pattern=$2
shift 2
cd "$(dirname "$0")"
export SWITCHYARD_BIN=${SWITCHYARD_BIN:-$(realpath ../bin/switchyard)}
"$bin" -test.run '^$' -test.bench "$pattern" -test.benchtime 1x &
bench=$!
sim=
for _ in $(seq 1 1200); do
	for c in $(cat /proc/$bench/task/*/children 2>/dev/null); do
		if tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -q '^SWITCHYARD_BENCH_SIM='; then
			sim=$c
		fi
	done
	[ -n "$sim" ] && break
	sleep 0.05
done
if [ -z "$sim" ]; then
	echo "$0: no simulator child of $bench found" >&2
	wait $bench
	exit 1
fi
"$@" -p "$sim" &
tool=$!
wait $bench
wait $tool
