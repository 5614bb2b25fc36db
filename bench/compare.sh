#!/bin/sh
# Before/after in one run (docs/performance.md's table): builds switchyard
# at BEFORE (a git ref, default main) and at the work tree, then runs each
# process benchmark for both binaries back to back, so machine noise hits
# both alike. The in-process TrueNAS benchmark (whose simulator changed
# too) runs from each tree's own test binary.
#
#   bench/compare.sh [BEFORE] > /tmp/compare.txt
#
# Short runs (-benchtime 1x; the start-up benchmark 5x) keep the CPU modest.
set -eu
cd "$(dirname "$0")/.."
before=${1:-main}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$before" | tar -x -C "$work"
mkdir -p "$work/out"
(cd "$work" && go build -o out/switchyard-before ./cmd/switchyard && go test -c -o out/bench-before.test ./bench/)
go build -o "$work/out/switchyard-after" ./cmd/switchyard
go test -c -o "$work/out/bench-after.test" ./bench/
run() { # name benchtime pattern
	for side in before after; do
		echo "## $1 $side"
		(cd bench && SWITCHYARD_BIN="$work/out/switchyard-$side" "$work/out/bench-after.test" \
			-test.run '^$' -test.bench "$3" -test.benchtime "$2" | grep '^Benchmark')
	done
}
run validate 1x 'ValidateProcess|ValidateFloorProcess' # the floor runs no switchyard: a gauge of the machine's state per side
run hostpath 1x 'HostpathPairProcess'
run zfs-nfs 1x 'ZFSNFSProcess'
run startup 5x 'StartupProcess'
run scale 1x 'ScaleProcess'
for side in before after; do
	echo "## truenas $side"
	(cd bench && "$work/out/bench-$side.test" -test.run '^$' -test.bench 'TrueNASCreateDelete' -test.benchtime 1x | grep '^Benchmark')
done
