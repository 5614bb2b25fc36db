#!/usr/bin/env bash
# Runs the unit tier's tests (every package but sanity/, as `make unit`)
# with in-package coverage (`go test -cover`: a package counts only the
# statements its own tests run, internal and external test packages alike)
# and prints one row per package, lowest coverage first. Backend packages
# (the ones driver/allbackends links, and their subpackages) are marked,
# and the run fails when one of them is below COVER_MIN percent.
#
# Usage: scripts/cover.sh [package patterns]   (default: as `make unit`)
#   COVER_MIN=60   threshold for backend packages (0: report only)
#   COVER_OUT=bin/cover.out   the merged profile (go tool cover -html=...)
# As root, the tiers that need root (real mounts) run and count, as in
# `make test`; LAB_REQUIRE is honoured by the tests themselves.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
GO="${GO:-go}"
min="${COVER_MIN:-60}"
out="${COVER_OUT:-bin/cover.out}"
mkdir -p "$(dirname "$out")"

mod=$($GO list -m) || exit 1
if [ $# -gt 0 ]; then
	pkgs=$($GO list "$@") || exit 1
else
	pkgs=$($GO list ./... | grep -v /sanity)
fi
backends=$($GO list -f '{{join .Imports "\n"}}' ./driver/allbackends | grep "^$mod/") || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086 # one argument per package
$GO test -count=1 -cover -coverprofile="$out" $pkgs >"$log" 2>&1
status=$?

# Summary lines: "ok  <pkg> <time> coverage: N% of statements",
# "    <pkg>  coverage: 0.0% of statements" (no test files),
# "?   <pkg> [no test files]" (no statements), "FAIL <pkg> ...".
awk -v mod="$mod/" -v min="$min" -v blist="$backends" '
BEGIN { n = split(blist, b, "\n"); for (i = 1; i <= n; i++) if (b[i] != "") backend[b[i]] = 1 }
function isbackend(p,   k) { for (k in backend) if (p == k || index(p, k "/") == 1) return 1; return 0 }
{
	split($0, f, "\t"); pkg = f[2]; sub(/ .*/, "", pkg)
	if (index(pkg, mod) != 1) next
	if (f[1] ~ /^FAIL/) { pct[pkg] = -1; note[pkg] = "tests FAIL"; next }
	if (match($0, /coverage: [0-9.]+%/)) {
		v = substr($0, RSTART + 10, RLENGTH - 11) + 0
		if (!(pkg in pct)) { pct[pkg] = v; note[pkg] = (f[1] ~ /^ok/) ? "" : "no test files" }
	} else if ($0 ~ /no test files|no statements/ && !(pkg in pct)) { pct[pkg] = -2; note[pkg] = "no statements" }
}
END {
	sorter = "sort -k1,1n -k2,2 | cut -f2-"
	for (p in pct) {
		s = pct[p] >= 0 ? sprintf("%6.1f%%", pct[p]) : "     -"
		kind = isbackend(p) ? "backend" : ""
		if (kind != "" && min > 0 && (pct[p] == -1 || (pct[p] >= 0 && pct[p] < min))) { note[p] = note[p] (note[p] ? "; " : "") "below " min "%"; low++ }
		short = substr(p, length(mod) + 1)
		printf "%09.3f\t%-32s %-8s %s%s\n", pct[p] == -2 ? 999 : pct[p] + 10, short, kind, s, (note[p] ? "  " note[p] : "") | sorter
	}
	close(sorter)
	exit low > 0 ? 3 : 0
}' "$log" | { printf '%-32s %-8s %7s\n' package kind coverage; cat; }
rc=("${PIPESTATUS[@]}")
echo "(in-package statement coverage; profile in $out)"
if [ "$status" -ne 0 ]; then
	echo "cover: some tests failed; their output:" >&2
	grep -v -E $'^(ok  |\\?   )\t|^\t.*coverage: ' "$log" >&2
	exit 1
fi
if [ "${rc[0]}" -eq 3 ]; then
	echo "cover: a backend package is below COVER_MIN=$min%" >&2
	exit 1
fi
exit "${rc[0]}"
