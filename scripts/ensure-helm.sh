#!/usr/bin/env bash
# Installs the pinned Helm into the project-local bin/tools (ignored by git)
# with `go install` from the Go module proxy, and prints its path. The chart
# tests (deploy/charts/switchyard) run `helm lint` and `helm template` with
# it. Idempotent: when the pinned version is there it only checks (well under
# a second). HELM_VERSION overrides the pin; when the v3 pin cannot be
# installed, Helm 4 (HELM4_VERSION) is tried, since the chart works with both.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
HELM4_VERSION="${HELM4_VERSION:-v4.3.1}"
GO="${GO:-go}"
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
dir="$PWD/bin/tools"
bin="$dir/helm"

say() { echo "ensure-helm: $*" >&2; }

# The Kubernetes version `helm template` and `helm lint` assume without a
# cluster (Helm's own release builds stamp it; go install does not, and it
# would say v1.20, older than the chart's kubeVersion). Helm 3.22 is built on
# Kubernetes 1.37's client libraries.
KUBE_MAJOR=1
KUBE_MINOR=37
# What was installed, and how: a change to either reinstalls.
recipe="$HELM_VERSION $HELM4_VERSION k8s=$KUBE_MAJOR.$KUBE_MINOR"
stamp="$dir/.helm-recipe"

has() { [ -x "$bin" ] && "$bin" version --short 2>/dev/null | grep -q "^$1\(+\|$\)"; }

if { has "$HELM_VERSION" || has "$HELM4_VERSION"; } && [ "$(cat "$stamp" 2>/dev/null)" = "$recipe" ]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
# A machine-wide copy keyed by the recipe: a fresh clone (CI's) takes it in
# milliseconds instead of rebuilding Helm (8-9 minutes cold on 2 cores).
cache="${SWITCHYARD_TOOLS_CACHE:-/var/cache/switchyard-lab/tools}/helm-$(echo "$recipe" | sha256sum | cut -c1-16)"
if [ -x "$cache/helm" ] && cp "$cache/helm" "$bin.tmp" && mv "$bin.tmp" "$bin" && "$bin" version --short >/dev/null 2>&1; then
	echo "$recipe" >"$stamp"
	echo "$bin"
	exit 0
fi
# Helm reads its version from these variables; without them `helm version`
# says v3.x-dev or the like and the check above would never match.
install() { # install MODULE_MAJOR VERSION
	local mod="helm.sh/helm/$1" v=$2
	say "installing helm $v into bin/tools (a few minutes, once)"
	GOBIN="$dir" GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" install \
		-ldflags "-s -w -X $mod/internal/version.version=$v -X $mod/internal/version.metadata= \
			-X $mod/pkg/chartutil.k8sVersionMajor=$KUBE_MAJOR -X $mod/pkg/chartutil.k8sVersionMinor=$KUBE_MINOR \
			-X $mod/pkg/lint/rules.k8sVersionMajor=$KUBE_MAJOR -X $mod/pkg/lint/rules.k8sVersionMinor=$KUBE_MINOR" \
		"$mod/cmd/helm@$v" >&2
}
if ! install v3 "$HELM_VERSION"; then
	say "helm $HELM_VERSION failed to install; trying $HELM4_VERSION"
	install v4 "$HELM4_VERSION" || {
		say "neither helm $HELM_VERSION nor $HELM4_VERSION could be installed with go install (see above)"
		exit 1
	}
fi
"$bin" version --short >&2
echo "$recipe" >"$stamp"
if mkdir -p "$cache" 2>/dev/null && cp "$bin" "$cache/helm.tmp" 2>/dev/null; then
	mv "$cache/helm.tmp" "$cache/helm"
fi
echo "$bin"
