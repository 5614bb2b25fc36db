#!/usr/bin/env bash
# Runs every native Go fuzz target in the module for FUZZTIME each, one
# after another (go test takes one -fuzz target per package run), prints a
# summary table and stops at the first crash, showing the reproducer.
#   scripts/fuzz.sh [packages...]     (default ./...)
# FUZZTIME (default 10s), FUZZPARALLEL (default: go's choice), GO (default go).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
par=()
[[ -n "${FUZZPARALLEL:-}" ]] && par=(-parallel "$FUZZPARALLEL")
pkgs=("$@")
[[ ${#pkgs[@]} -eq 0 ]] && pkgs=(./...)

rows=()
summary() {
	printf '\n%-45s %-28s %12s  %s\n' package target execs result
	for r in "${rows[@]}"; do printf '%s\n' "$r"; done
}
start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for pkg in $("$GO" list "${pkgs[@]}"); do
	dir=$("$GO" list -f '{{.Dir}}' "$pkg")
	ls "$dir"/*_test.go >/dev/null 2>&1 || continue
	grep -lq '^func Fuzz' "$dir"/*_test.go 2>/dev/null || continue
	for target in $("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do
		short=${pkg#github.com/switchyard-csi/switchyard/}
		"$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "${par[@]}" "$pkg" >"$log" 2>&1
		rc=$?
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
		if [[ $rc -eq 0 ]]; then
			rows+=("$(printf '%-45s %-28s %12s  %s' "$short" "$target" "${execs:--}" ok)")
			continue
		fi
		rows+=("$(printf '%-45s %-28s %12s  %s' "$short" "$target" "${execs:--}" FAIL)")
		cat "$log"
		summary
		repro=$(grep -o 'testdata/fuzz/[^ ]*' "$log" | head -1)
		if [[ -n "$repro" ]]; then
			echo
			echo "crash reproducer: ${dir#"$PWD"/}/$repro"
			echo "re-run: $GO test -run '${target}/${repro##*/}' $pkg"
		fi
		exit 1
	done
done
summary
echo
echo "fuzzed ${#rows[@]} targets for $FUZZTIME each in $((SECONDS - start))s"
