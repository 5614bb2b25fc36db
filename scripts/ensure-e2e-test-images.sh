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
# Needs root (Docker, debootstrap).
set -euo pipefail

say() { echo "e2e-test-images: $*" >&2; }
die() {
	say "$*"
	exit 1
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
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

BUSYBOX=/bin/busybox
if ! { [ -x "$BUSYBOX" ] && dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed'; }; then
	say "installing busybox-static"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q busybox-static >/dev/null || die "apt-get install busybox-static failed"
fi

MIRROR=${DEBIAN_MIRROR:-}
[ -n "$MIRROR" ] || MIRROR=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $3 == "'$SUITE'" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian

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
BASE_MNT=""
cleanup() {
	# debootstrap mounts proc/sys in its target; an interrupted run must not leave them.
	if [ -n "$BASE_MNT" ]; then
		local m
		# shellcheck disable=SC2013 # mount points of debootstrap's target have no spaces
		for m in $(awk -v r="$BASE_MNT" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
			umount -l "$m" 2>/dev/null || true
		done
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
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
	mkdir -p "$b/rootfs/bin" "$b/rootfs/etc" "$b/rootfs/tmp"
	cp "$BUSYBOX" "$b/rootfs/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ "$a" = busybox ] || ln -s busybox "$b/rootfs/bin/$a"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$b/rootfs/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' >"$b/rootfs/etc/group"
	chmod 1777 "$b/rootfs/tmp"
	build busybox "$REG/busybox:1.37.0-2" "$BB_KEY" "$DF/Dockerfile.busybox" "$b"
fi

# The Debian minbase for glibc-dns-testing and agnhost.
BASE_TAR="$CACHE/base/$BASE_KEY/rootfs.tar"
BASE_REF="switchyard-lab/e2e-test-base:$BASE_KEY"
if ! have glibc-dns-testing "$GL_KEY" || ! have agnhost "$AG_KEY"; then
	if [ ! -s "$BASE_TAR" ]; then
		command -v debootstrap >/dev/null || {
			say "installing debootstrap"
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null || die "apt-get install debootstrap failed"
		}
		say "debootstrap $SUITE minbase from $MIRROR (about a minute)"
		BASE_MNT="$WORK/base"
		debootstrap --variant=minbase "$SUITE" "$BASE_MNT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
			{ tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed (log above)"; }
		rm -rf "$BASE_MNT"/var/cache/apt/* "$BASE_MNT"/var/lib/apt/lists/* "$BASE_MNT"/var/log/* \
			"$BASE_MNT"/usr/share/doc/* "$BASE_MNT"/usr/share/man/* "$BASE_MNT"/usr/share/info/* \
			"$BASE_MNT"/usr/share/locale/* "$BASE_MNT"/etc/machine-id
		mkdir -p "$CACHE/base/$BASE_KEY"
		tar -C "$BASE_MNT" --numeric-owner -cf "$BASE_TAR.tmp" . || die "tar of the base failed"
		mv "$BASE_TAR.tmp" "$BASE_TAR"
		rm -rf "$BASE_MNT"
		BASE_MNT=""
	fi
	if ! docker image inspect "$BASE_REF" >/dev/null 2>&1; then
		docker import "$BASE_TAR" "$BASE_REF" >/dev/null || die "docker import $BASE_TAR failed"
	fi
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
