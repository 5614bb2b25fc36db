#!/bin/sh
# Before/after of the SIMULATORS in one run: the process benchmarks start
# the simulated host inside the benchmark binary, so a simulator change is
# measured by building that binary at BEFORE (a git ref, default main) and
# at the work tree and running both, back to back, against the same
# switchyard binary (the work tree's). compare.sh is the driver's
# counterpart (one benchmark binary, two driver binaries).
#
#   bench/compare-sim.sh [BEFORE] > /tmp/compare-sim.txt
#   BENCH=TrueNASCreateDelete bench/compare-sim.sh main   # one benchmark
#   DRIVER=both BENCH=TrueNASCreateDelete bench/compare-sim.sh main   # the driver too
#   ROUNDS=3 ...   # rounds of before, after (default 2)
#
# DRIVER=both builds switchyard at BEFORE as well, and each side runs its
# own tree's driver: a before/after of a change to both the driver and the
# simulator, in one alternating run.
set -eu
cd "$(dirname "$0")/.."
before=${1:-main}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$before" | tar -x -C "$work"
# the work tree's benchmark code on both sides: the same metrics, only
# the simulators differ (the benchmarks use no simulator API that changed)
rm -rf "$work/bench" && cp -r bench "$work/bench"
mkdir -p "$work/out"
(cd "$work" && go test -c -o out/bench-before.test ./bench/)
go build -o "$work/out/switchyard-after" ./cmd/switchyard
if [ "${DRIVER:-}" = both ]; then
	(cd "$work" && go build -o out/switchyard-before ./cmd/switchyard)
else
	cp "$work/out/switchyard-after" "$work/out/switchyard-before"
fi
go test -c -o "$work/out/bench-after.test" ./bench/
pattern=${BENCH:-'ZFSNFSProcess/(per-exec|none)|TrueNASCreateDelete'}
for round in $(seq "${ROUNDS:-2}"); do
	for side in before after; do
		driver=after
		[ "${DRIVER:-}" = both ] && driver=$side
		echo "## round $round: $pattern, simulator $side, driver $driver"
		(cd bench && SWITCHYARD_BIN="$work/out/switchyard-$side" "$work/out/bench-$side.test" \
			-test.run '^$' -test.bench "$pattern" -test.benchtime 1x | grep '^Benchmark')
	done
done
