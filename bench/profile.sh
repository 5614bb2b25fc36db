#!/bin/sh
# Profiles the driver's CPU per call (issue 16, deliverable 2): runs the
# in-process benchmarks of bench/profile_test.go with -cpuprofile and prints
# the server side's top entries (grpc.(*Server), the HTTP/2 server transport,
# driver/ frames; the simulators' own frames under simulators/).
#
#   bench/profile.sh [benchtime]       # default 2s per benchmark
#
# The profiles stay in $PROFILE_DIR (default a temporary directory) for
# `go tool pprof -http` or -peek.
set -eu
cd "$(dirname "$0")"
benchtime=${1:-2s}
out=${PROFILE_DIR:-$(mktemp -d)}
server='grpc.\(\*Server\)|http2Server|loopyWriter|driver/'
go test -c -o "$out/bench.test" .
for b in ValidateParallel HostpathPair ZFSNFSPair; do
	"$out/bench.test" -test.run '^$' -test.bench "^Benchmark$b\$" -test.benchtime "$benchtime" \
		-test.cpuprofile "$out/$b.out" | grep '^Benchmark'
	echo "== $b: the server's cumulative top"
	go tool pprof -top -cum -focus "$server" "$out/bench.test" "$out/$b.out" 2>/dev/null | sed -n '6,40p'
	if [ "$b" = ZFSNFSPair ]; then
		echo "== $b: the simulated host's cumulative top"
		go tool pprof -top -cum -focus 'simulators/' "$out/bench.test" "$out/$b.out" 2>/dev/null | sed -n '6,30p'
	fi
done
echo "profiles in $out"
