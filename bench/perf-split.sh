#!/bin/sh
# Splits a `perf record -g` profile of the driver (SWITCHYARD_PERF_DIR, see
# driverproc_test.go) by who spent the CPU: the goroutine a sample ran in
# (gRPC's reader, worker and writer; x/crypto's packet reader; the handler
# and switchyard's own frames in it) or the runtime's own threads (parking a
# goroutine and finding the next, sysmon, GC). docs/performance.md, "Driver
# CPU at one caller: what is left", is made with it.
#
#   bench/perf-split.sh /tmp/p/BenchmarkZFSNFSProcess_relay_callers1.data
#
# A sample counts once, for the first rule its call stack matches.
set -eu
perf script -i "$1" 2>/dev/null | awk '
function classify(s) {
	if (s ~ /runtime\.sysmon/) return "runtime: sysmon"
	if (s ~ /runtime\.mcall|park_m|goexit0/) return "runtime: parking a goroutine, finding the next (spinning, netpoll, idle threads)"
	if (s ~ /gcBgMarkWorker|gcAssist|bgsweep|bgscavenge/) return "runtime: GC"
	if (s ~ /entersyscall|exitsyscall/) return "runtime: syscall entry and exit"
	if (s ~ /switchyard-csi\/switchyard\//) {
		if (s ~ /sessionStdin\)\.Write|x\/crypto\/ssh\.\(\*channel\)\.Write/) return "switchyard: the program write (x/crypto encrypt, write(2))"
		if (s ~ /log\/slog/) return "switchyard: the info log line"
		if (s ~ /shellReads/) return "switchyard: session stream readers"
		return "switchyard: handler (interceptors, engine, executor, allocation)"
	}
	if (s ~ /HandleStreams/) return "gRPC: reader (frames in)"
	if (s ~ /loopyWriter/) return "gRPC: writer (frames out)"
	if (s ~ /serverWorker|handleStream/) return "gRPC: worker (unmarshal, marshal, status)"
	if (s ~ /handshakeTransport\)\.readLoop/) return "x/crypto/ssh: packet reader (read, decrypt)"
	if (s ~ /x\/crypto\/ssh\.\(\*mux\)\.loop/) return "x/crypto/ssh: channel mux"
	return "other"
}
/^[^ \t]/ { stack = ""; next }
/^[ \t]/ { stack = stack " " $2; next }
/^$/ { if (stack != "") { n[classify(stack)]++; total++ }; stack = "" }
END {
	if (stack != "") { n[classify(stack)]++; total++ }
	for (k in n) printf "%5.1f %%  %s\n", 100 * n[k] / total, k
	printf "%d samples\n", total
}' | sort -rn
