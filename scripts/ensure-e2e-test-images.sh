#!/usr/bin/env bash
# Builds, without any registry, the images Kubernetes' storage e2e tests
# (e2e.test v1.37.2, test/e2e/storage/testsuites) run their pods from, under
# the names the tests ask for (test/utils/image/manifest.go), as
# docker-archive tarballs that `ctr -n k8s.io images import` reads:
#
#   registry.k8s.io/e2e-test-images/busybox:1.37.0-2         every suite's test pods
#                               (Debian's busybox-static, a link per applet)
#   registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1  multiVolume's concurrent-access pods
#                               (a Debian bookworm minbase: a glibc userland)
#   registry.k8s.io/e2e-test-images/agnhost:2.66.1           subPath's pods
#                               (agnhost built from the module proxy at v1.37.2 on that base)
#
# The framework could take other registries (KUBE_TEST_REPO_LIST), but the
# names would still have to be served by something; imported under the
# upstream names, the pods' IfNotPresent pull policy finds them on the node.
#
# Cached by content key: each tarball by the hash of its inputs under
# $CACHE/e2e-test-images/parts/, the debootstrap base under
# $CACHE/e2e-test-images/base/<key>/, and the set under
# $CACHE/e2e-test-images/<key>/ (images.txt: "tarball reference" lines).
# The last line on stdout is that directory; progress goes to stderr. A warm
# call computes the keys and prints the directory without Docker.
#
# usage: scripts/ensure-e2e-test-images.sh [--import SOCKET]
#   --import SOCKET  also import the set into the containerd answering on
#                    SOCKET (namespace k8s.io), e.g. the lab's host node
# env: GO (default go), SWITCHYARD_LAB_CACHE (default /var/cache/switchyard-lab),
#   DEBIAN_MIRROR (default: this machine's apt mirror).
# Needs root (Docker, debootstrap). The Debian base and the busybox tree are
# scripts/lib/image-bases.sh's, shared with scripts/images.sh.
set -euo pipefail

say() { echo "e2e-test-images: $*" >&2; }
die() {
	say "$*"
	exit 1
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/image-bases.sh
. "$ROOT/scripts/lib/image-bases.sh"
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
GO=${GO:-go}
CACHE=${SWITCHYARD_LAB_CACHE:-/var/cache/switchyard-lab}/e2e-test-images
DF="$ROOT/deploy/images/e2e-test"
AGN="$ROOT/e2e/conformance/agnhost"
SUITE=bookworm
# Bump when the way an image is made changes outside the hashed inputs.
RECIPE=1
REG=registry.k8s.io/e2e-test-images

IMPORT=""
while [ $# -gt 0 ]; do
	case "$1" in
	--import)
		[ $# -ge 2 ] || die "--import needs containerd's socket"
		IMPORT=$2
		shift 2
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "not root: Docker and debootstrap need root"

sha() { sha256sum | cut -c1-20; }
STARTED=$(date +%s)

busybox_ensure # its hash is busybox's key
base_mirror "$SUITE"

# --- keys (cheap: no Docker, no build) -----------------------------------------
GOVERSION=$("$GO" version) || die "no go command ($GO): agnhost is built with it"
BASE_KEY=$(printf '%s\n%s\n%s\n' "$SUITE" "$MIRROR" "$RECIPE" | sha)
BB_KEY=$( (echo "$RECIPE"; sha256sum <"$BUSYBOX"; cat "$DF/Dockerfile.busybox") | sha)
GL_KEY=$( (echo "$RECIPE $BASE_KEY"; cat "$DF/Dockerfile.glibc") | sha)
AG_KEY=$( (echo "$RECIPE $BASE_KEY $GOVERSION"; cat "$AGN/go.mod" "$AGN/go.sum" "$AGN/tools.go" "$DF/Dockerfile.agnhost") | sha)
# name reference key
SET=(
	"busybox $REG/busybox:1.37.0-2 $BB_KEY"
	"glibc-dns-testing $REG/glibc-dns-testing:2.1.1 $GL_KEY"
	"agnhost $REG/agnhost:2.66.1 $AG_KEY"
)
SET_KEY=$(printf '%s\n' "${SET[@]}" | sha)
OUT="$CACHE/$SET_KEY"

import() {
	[ -n "$IMPORT" ] || return 0
	local ctr tar ref
	ctr=$(command -v ctr) || die "no ctr command (package containerd) to import into $IMPORT"
	while read -r tar ref; do
		# Already there (same tag, same content): nothing to do.
		"$ctr" --address "$IMPORT" -n k8s.io images import "$OUT/$tar" >/dev/null ||
			die "ctr --address $IMPORT -n k8s.io images import $OUT/$tar failed"
	done <"$OUT/images.txt"
	say "imported $(wc -l <"$OUT/images.txt") images into $IMPORT"
}

if [ -f "$OUT/.complete" ]; then
	touch "$OUT" # in use: the cache keeps the newest sets
	import
	echo "$OUT"
	exit 0
fi

# --- cold: build what is missing -------------------------------------------------
WORK=$(mktemp -d /tmp/switchyard-e2e-images.XXXXXX)
trap 'base_cleanup; rm -rf "$WORK"' EXIT
"$ROOT/scripts/ensure-docker.sh" || die "Docker is not available (scripts/ensure-docker.sh failed)"
mkdir -p "$CACHE/parts"

# build NAME REF KEY DOCKERFILE CONTEXT [--build-arg K=V]: unless its tarball exists.
build() {
	local name=$1 ref=$2 key=$3 dockerfile=$4 ctx=$5
	shift 5
	local part="$CACHE/parts/$name-$key.tar"
	[ -s "$part" ] && return 0
	say "building $ref"
	DOCKER_BUILDKIT=0 docker build --network host -q -f "$dockerfile" -t "$ref" "$@" "$ctx" >"$WORK/build.log" 2>&1 ||
		{ cat "$WORK/build.log" >&2; die "docker build of $ref failed"; }
	docker save -o "$part.tmp" "$ref" || die "docker save $ref failed"
	chmod 0644 "$part.tmp"
	mv "$part.tmp" "$part"
}
have() { [ -s "$CACHE/parts/$1-$2.tar" ]; }

# busybox: the applets as links, as deploy/images/busybox.
if ! have busybox "$BB_KEY"; then
	b="$WORK/busybox"
	busybox_rootfs "$b/rootfs"
	build busybox "$REG/busybox:1.37.0-2" "$BB_KEY" "$DF/Dockerfile.busybox" "$b"
fi

# The Debian minbase for glibc-dns-testing and agnhost.
BASE_TAR="$CACHE/base/$BASE_KEY/rootfs.tar"
BASE_REF="switchyard-lab/e2e-test-base:$BASE_KEY"
if ! have glibc-dns-testing "$GL_KEY" || ! have agnhost "$AG_KEY"; then
	[ -s "$BASE_TAR" ] || base_debootstrap "$SUITE" "" "$BASE_TAR"
	base_docker_import "$BASE_TAR" "$BASE_REF"
	mkdir -p "$WORK/empty"
	build glibc-dns-testing "$REG/glibc-dns-testing:2.1.1" "$GL_KEY" "$DF/Dockerfile.glibc" "$WORK/empty" --build-arg "BASE=$BASE_REF"
	if ! have agnhost "$AG_KEY"; then
		a="$WORK/agnhost"
		mkdir -p "$a/rootfs/uploads"
		say "building agnhost (k8s.io/kubernetes/test/images/agnhost v1.37.2, static)"
		(cd "$AGN" && GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=local nice "$GO" build -trimpath -ldflags "-s -w" \
			-o "$a/rootfs/agnhost" k8s.io/kubernetes/test/images/agnhost) >&2 || die "go build of agnhost failed (module e2e/conformance/agnhost)"
		ln -s agnhost "$a/rootfs/agnhost-2"
		build agnhost "$REG/agnhost:2.66.1" "$AG_KEY" "$DF/Dockerfile.agnhost" "$a" --build-arg "BASE=$BASE_REF"
	fi
fi

rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp"
for l in "${SET[@]}"; do
	read -r name ref key <<<"$l"
	ln -f "$CACHE/parts/$name-$key.tar" "$OUT.tmp/$name.tar"
	echo "$name.tar $ref" >>"$OUT.tmp/images.txt"
done
touch "$OUT.tmp/.complete"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
# Keep the newest sets; drop parts no set links to and old bases.
touch "$OUT"
# shellcheck disable=SC2012 # the cache's own hex names
ls -1dt "$CACHE"/*/ | while read -r d; do case $d in */parts/ | */base/) ;; *) echo "$d" ;; esac; done | tail -n +4 | while read -r old; do rm -rf "$old"; done
find "$CACHE/parts" -maxdepth 1 -name '*.tar' -links 1 -delete
# shellcheck disable=SC2012 # the cache's own hex names
ls -1dt "$CACHE"/base/*/ 2>/dev/null | tail -n +2 | while read -r old; do rm -rf "$old"; done

say "built in $(($(date +%s) - STARTED)) s:"
while read -r tar ref; do
	printf '  %-52s %6s  %s\n' "$ref" "$(du -h "$OUT/$tar" | cut -f1)" "$OUT/$tar" >&2
done <"$OUT/images.txt"
import
echo "$OUT"
