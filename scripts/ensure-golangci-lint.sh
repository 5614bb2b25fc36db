#!/usr/bin/env bash
# Installs the pinned golangci-lint v2 into the project-local bin/tools
# (ignored by git) with `go install` from the Go module proxy, and prints its
# path. Idempotent: when the pinned version is already there it only checks
# (well under a second). Bump GOLANGCI_LINT_VERSION to upgrade; the newest v2
# is listed by `go list -m -versions github.com/golangci/golangci-lint/v2`.
set -euo pipefail

GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
GO="${GO:-go}"
cd "$(dirname "$0")/.."
dir="$PWD/bin/tools"
bin="$dir/golangci-lint"

if [ -x "$bin" ] && "$bin" version 2>/dev/null | grep -q "version ${GOLANGCI_LINT_VERSION#v} "; then
	echo "$bin"
	exit 0
fi

echo "ensure-golangci-lint: installing golangci-lint $GOLANGCI_LINT_VERSION into bin/tools (about a minute, once)" >&2
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS=-mod=mod "$GO" install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" >&2
"$bin" version >&2
echo "$bin"
