#!/usr/bin/env bash
# Installs the pinned actionlint (the GitHub Actions workflow checker that
# `make lint` runs over .github/workflows) into the project-local bin/tools
# (ignored by git) with `go install` from the Go module proxy, and prints its
# path. Idempotent: when the pinned version is already there it only asks
# the binary its version (milliseconds). Bump ACTIONLINT_VERSION to upgrade;
# `go list -m -versions github.com/rhysd/actionlint` lists the served ones.
set -euo pipefail

ACTIONLINT_VERSION="${ACTIONLINT_VERSION:-v1.7.12}"
GO="${GO:-go}"
cd "$(dirname "$0")/.."
dir="$PWD/bin/tools"
bin="$dir/actionlint"

# actionlint -version prints the version on its first line, without the "v".
if [ -x "$bin" ] && [ "$("$bin" -version 2>/dev/null | head -1)" = "${ACTIONLINT_VERSION#v}" ]; then
	echo "$bin"
	exit 0
fi

echo "ensure-actionlint: installing actionlint $ACTIONLINT_VERSION into bin/tools (once)" >&2
mkdir -p "$dir"
# -ldflags sets the version actionlint reports (a module install leaves it
# empty otherwise), which is what the check above compares.
GOBIN="$dir" GOFLAGS=-mod=mod "$GO" install \
	-ldflags "-s -w -X github.com/rhysd/actionlint.version=${ACTIONLINT_VERSION#v}" \
	"github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2 ||
	{ echo "ensure-actionlint: go install github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION failed" >&2; exit 1; }
"$bin" -version >&2
echo "$bin"
