#!/usr/bin/env bash
# Builds the Kubernetes binaries the lab's local cluster runs (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl) and the
# kubernetes-csi sidecars (csi-provisioner, csi-attacher, csi-resizer,
# csi-snapshotter, snapshot-controller, plus the snapshot CRDs) from the Go
# module proxy, and caches them by content key:
#
#   /var/cache/switchyard-lab/kube/<key>/bin           (lab/cluster/kubebuild)
#   /var/cache/switchyard-lab/kube-sidecars/<key>/bin  (lab/cluster/sidecarbuild)
#   /var/cache/switchyard-lab/kube-sidecars/<key>/crd
#
# The key hashes the nested module's go.mod and go.sum, the packages built,
# the build flags and the Go version (tools.go only keeps go.mod tidy; the
# packages on the go build command line are what is built), so any change to the pins builds into a new
# directory and an unchanged checkout finds its binaries again in well under
# a second. Each set is one `go build` invocation (the packages share most of
# their dependencies; one invocation compiles each of them once), built into a
# temporary directory that is renamed into place only when complete.
#
# Usage:
#   ensure-kube.sh                 build what is missing, print the kube bin dir
#   ensure-kube.sh --kube-only     only the Kubernetes binaries
#   ensure-kube.sh --print-dir     print the kube bin dir; exit 3 if not built yet
#   ensure-kube.sh --sidecars-dir  print the sidecars dir (bin/ and crd/ inside); exit 3 if not built yet
#
# Env: SWITCHYARD_LAB_CACHE (default /var/cache/switchyard-lab), GO (default go).
set -euo pipefail

say() { echo "ensure-kube: $*" >&2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${SWITCHYARD_LAB_CACHE:-/var/cache/switchyard-lab}
GO=${GO:-go}
command -v "$GO" >/dev/null || GO=/usr/local/go/bin/go
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

# The release every binary reports (kubectl version, the node's kubeletVersion).
kube_version=v1.37.2
kube_minor=${kube_version#v1.}
kube_minor=${kube_minor%%.*}
# Every build is `go build -trimpath -ldflags="<ldflags>"`; the key hashes the ldflags.
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$kube_minor"
kube_pkgs=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl)
# -trimpath as for Kubernetes: the sidecars then reuse the build cache's
# compiled k8s.io libraries instead of compiling them a second time.
sidecar_ldflags="-s -w"
sidecar_pkgs=(github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner
	github.com/kubernetes-csi/external-attacher/v4/cmd/csi-attacher
	github.com/kubernetes-csi/external-resizer/v2/cmd/csi-resizer
	github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter
	github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller)

# key MODDIR LDFLAGS PKGS...: the content key of one nested build module.
key() {
	local dir=$1 flags=$2 f
	shift 2
	{
		printf 'flags=-trimpath -ldflags=%s\ngo=%s %s/%s\n' "$flags" "$("$GO" env GOVERSION)" "$("$GO" env GOOS)" "$("$GO" env GOARCH)"
		printf 'package %s\n' "$@"
		for f in go.mod go.sum; do
			printf 'file %s %s\n' "$f" "$(wc -c <"$dir/$f")"
			cat "$dir/$f"
		done
	} | sha256sum | cut -c1-20
}

kube_mod=$root/lab/cluster/kubebuild
sidecar_mod=$root/lab/cluster/sidecarbuild
kube_dir=$cache/kube/$(key "$kube_mod" "$kube_ldflags" "${kube_pkgs[@]}")
sidecar_dir=$cache/kube-sidecars/$(key "$sidecar_mod" "$sidecar_ldflags" "${sidecar_pkgs[@]}")

case "${1:-}" in
--print-dir)
	echo "$kube_dir/bin"
	[ -x "$kube_dir/bin/kube-apiserver" ] || exit 3
	exit 0
	;;
--sidecars-dir)
	echo "$sidecar_dir"
	[ -x "$sidecar_dir/bin/csi-provisioner" ] || exit 3
	exit 0
	;;
--kube-only | "") ;;
*)
	say "unknown option $1 (use --print-dir, --sidecars-dir or --kube-only)"
	exit 2
	;;
esac

# build NAME MODDIR DEST LDFLAGS PKGS...: one go build into DEST/bin, atomically.
build() {
	local name=$1 mod=$2 dest=$3 ldflags=$4
	shift 4
	[ -d "$dest/bin" ] && return 0
	mkdir -p "$(dirname "$dest")"
	# One builder per set: a second caller waits and then finds it built.
	exec 9>"$dest.lock"
	flock 9
	if [ -d "$dest/bin" ]; then
		exec 9>&-
		return 0
	fi
	local tmp
	tmp=$(mktemp -d "$dest.tmp.XXXXXX")
	say "building $name (cold: tens of minutes on a loaded 2-core machine) into $dest"
	local start=$SECONDS
	if ! (cd "$mod" && "$GO" build -trimpath -ldflags="$ldflags" -o "$tmp/bin/" "$@") >"$tmp/build.log" 2>&1; then
		say "building $name failed; the end of $tmp/build.log:"
		tail -20 "$tmp/build.log" >&2
		exit 1
	fi
	local took=$((SECONDS - start))
	{
		echo "built $(date -u +%FT%TZ) in ${took}s"
		echo "go: $("$GO" env GOVERSION)"
		echo "flags: -trimpath -ldflags=\"$ldflags\""
		printf 'package: %s\n' "$@"
	} >"$tmp/BUILDINFO"
	if [ "$name" = sidecars ]; then
		copy_crds "$mod" "$tmp/crd"
	fi
	mv "$tmp" "$dest"
	rm -f "$dest.lock"
	exec 9>&-
	say "built $name in ${took}s"
}

# copy_crds MODDIR DEST: the VolumeSnapshot and VolumeGroupSnapshot CRDs of
# the snapshotter's client module at the version the module pins (from the Go
# module cache, not from the repository: they belong to that release).
copy_crds() {
	local mod=$1 dest=$2 dir
	dir=$(cd "$mod" && "$GO" list -m -f '{{.Dir}}' github.com/kubernetes-csi/external-snapshotter/client/v8)
	if [ -z "$dir" ] || [ ! -d "$dir/config/crd" ]; then
		(cd "$mod" && "$GO" mod download github.com/kubernetes-csi/external-snapshotter/client/v8)
		dir=$(cd "$mod" && "$GO" list -m -f '{{.Dir}}' github.com/kubernetes-csi/external-snapshotter/client/v8)
	fi
	mkdir -p "$dest"
	local n=0 f
	for f in "$dir"/config/crd/*storage.k8s.io_*.yaml; do
		cp "$f" "$dest/"
		chmod 0644 "$dest/$(basename "$f")"
		n=$((n + 1))
	done
	[ "$n" -ge 3 ] || {
		say "no snapshot CRDs in $dir/config/crd"
		exit 1
	}
}

build kubernetes "$kube_mod" "$kube_dir" "$kube_ldflags" "${kube_pkgs[@]}"
if [ "${1:-}" != --kube-only ]; then
	build sidecars "$sidecar_mod" "$sidecar_dir" "$sidecar_ldflags" "${sidecar_pkgs[@]}"
fi
echo "$kube_dir/bin"
