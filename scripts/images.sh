#!/usr/bin/env bash
# Builds switchyard's container images without any registry, as docker-archive
# tarballs that `docker load` and `ctr -n k8s.io images import` both read:
#
#   switchyard-controller:<version>   FROM scratch: static switchyard, CA certificates, a nonroot user
#   switchyard-node:<version>         Debian bookworm (debootstrap minbase) + deploy/images/node/packages.txt + switchyard
#   registry.k8s.io/sig-storage/<sidecar>:<its version>
#                                     each kubernetes-csi sidecar binary FROM scratch, under upstream's name
#   registry.k8s.io/pause:3.10        the lab's pod sandbox (deploy/images/pause)
#   switchyard-lab/busybox:1          Debian's busybox-static with its applets, for test pods
#
# Everything is cached by content key: each image's tarball by the hash of its
# inputs (binaries, Dockerfile, package list, reference) under
# $CACHE/images/parts/, the debootstrap base under $CACHE/node-base/<key>/, and
# the whole set under $CACHE/images/<key>/ (hard links to the parts, images.txt
# with "tarball reference" lines and lab-values.yaml for the Helm chart). The
# last line on stdout is that directory; progress goes to stderr. Every image
# is also present in the local Docker under its reference afterwards.
#
# usage: scripts/images.sh [--sidecars-dir DIR]
#   The sidecar binaries come from --sidecars-dir, else $SIDECARS_DIR, else
#   `scripts/ensure-kube.sh --sidecars-dir` when that script exists. Without
#   any, the sidecar images are left out (said on stderr).
# env: VERSION (default: git describe), GO (default: go), SWITCHYARD_LAB_CACHE
#   (default /var/cache/switchyard-lab).
#
# Needs root (Docker, debootstrap). Docker runs with --bridge=none, so every
# build uses --network host; multi-arch builds need buildx and a registry
# (docs/install.md), which these machines do not have.
set -euo pipefail

say() { echo "images: $*" >&2; }
die() {
	say "$*"
	exit 1
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/image-bases.sh
. "$ROOT/scripts/lib/image-bases.sh" # the Debian base and busybox, shared with ensure-e2e-test-images.sh
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
GO=${GO:-go}
CACHE=${SWITCHYARD_LAB_CACHE:-/var/cache/switchyard-lab}
VERSION=${VERSION:-$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)}
IMAGES="$ROOT/deploy/images"
SUITE=bookworm
# Bump when the way the base is made changes (not its package list: that is hashed).
BASE_RECIPE=2

SIDECARS_DIR=${SIDECARS_DIR:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--sidecars-dir)
		[ $# -ge 2 ] || die "--sidecars-dir needs a directory"
		SIDECARS_DIR=$2
		shift 2
		;;
	--sidecars-dir=*)
		SIDECARS_DIR=${1#*=}
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done

[ "$(id -u)" = 0 ] || die "not root: Docker and debootstrap need root"
case "$VERSION" in
*[!A-Za-z0-9_.-]* | "" | [.-]*) die "VERSION=$VERSION is not a valid image tag (letters, digits, _ . -)" ;;
esac

"$ROOT/scripts/ensure-docker.sh" || die "Docker is not available (scripts/ensure-docker.sh failed)"

WORK=$(mktemp -d /tmp/switchyard-images.XXXXXX)
trap 'base_cleanup; rm -rf "$WORK"' EXIT

sha() { sha256sum | cut -c1-20; }

# ctxhash DIR: a hash of a build context, names, modes, link targets and contents.
ctxhash() {
	(
		cd "$1"
		find . -printf '%p %m %y %l\n' | LC_ALL=C sort
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
	) | sha
}

STARTED=$(date +%s)

# --- binaries -----------------------------------------------------------------
mkdir -p "$WORK/bin"
say "building switchyard $VERSION (static)"
(cd "$ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w -X main.version=$VERSION" \
	-o "$WORK/bin/switchyard" ./cmd/switchyard) || die "go build ./cmd/switchyard failed"
(cd "$ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" \
	-o "$WORK/bin/pause" ./deploy/images/pause) || die "go build ./deploy/images/pause failed"

# --- image builder ------------------------------------------------------------
mkdir -p "$CACHE/images/parts"
SET_LINES=()

# build NAME REF DOCKERFILE CONTEXT [--build-arg K=V ...]: builds and saves the
# image unless a tarball for exactly these inputs exists.
build() {
	local name=$1 ref=$2 dockerfile=$3 ctx=$4
	shift 4
	local key part
	key=$(printf '%s\n%s\n%s\n%s\n' "$ref" "$(cat "$dockerfile")" "$(ctxhash "$ctx")" "$*" | sha)
	part="$CACHE/images/parts/$name-$key.tar"
	if [ ! -s "$part" ]; then
		say "building $ref"
		# The legacy builder (Debian's docker.io has no buildx) warns on every
		# build; its output is shown only when the build fails.
		DOCKER_BUILDKIT=0 docker build --network host -q -f "$dockerfile" -t "$ref" "$@" "$ctx" >"$WORK/build.log" 2>&1 ||
			{ cat "$WORK/build.log" >&2; die "docker build of $ref failed"; }
		docker save -o "$part.tmp" "$ref" || die "docker save $ref failed"
		chmod 0644 "$part.tmp"
		mv "$part.tmp" "$part"
	fi
	SET_LINES+=("$name $ref $key")
}

# --- controller ---------------------------------------------------------------
CA=/etc/ssl/certs/ca-certificates.crt
[ -s "$CA" ] || die "$CA is missing (apt-get install ca-certificates)"
c="$WORK/controller"
mkdir -p "$c/rootfs/usr/local/bin" "$c/rootfs/etc/ssl/certs" "$c/rootfs/tmp"
cp "$WORK/bin/switchyard" "$c/rootfs/usr/local/bin/switchyard"
cp "$CA" "$c/rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$c/rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$c/rootfs/etc/group"
chmod 1777 "$c/rootfs/tmp"
chmod 0644 "$c/rootfs/etc/passwd" "$c/rootfs/etc/group" "$c/rootfs/etc/ssl/certs/ca-certificates.crt"
build controller "switchyard-controller:$VERSION" "$IMAGES/controller/Dockerfile" "$c/"

# --- node: the debootstrap base, then switchyard on top -------------------------
base_mirror "$SUITE"
PKGS=$(grep -v '^\s*#' "$IMAGES/node/packages.txt" | awk 'NF {print $1}' | LC_ALL=C sort | paste -sd, -)
BASE_KEY=$(printf '%s\n%s\n%s\n%s\n' "$SUITE" "$MIRROR" "$PKGS" "$BASE_RECIPE" | sha)
BASE_TAR="$CACHE/node-base/$BASE_KEY/rootfs.tar"
BASE_REF="switchyard-lab/node-base:$BASE_KEY"
[ -s "$BASE_TAR" ] || base_debootstrap "$SUITE" "$PKGS" "$BASE_TAR"
base_docker_import "$BASE_TAR" "$BASE_REF"
n="$WORK/node"
mkdir -p "$n"
cp "$WORK/bin/switchyard" "$n/switchyard"
build node "switchyard-node:$VERSION" "$IMAGES/node/Dockerfile" "$n/" --build-arg "BASE=$BASE_REF"

# --- pause and busybox --------------------------------------------------------
p="$WORK/pause"
mkdir -p "$p"
cp "$WORK/bin/pause" "$p/pause"
build pause "registry.k8s.io/pause:3.10" "$IMAGES/pause/Dockerfile" "$p/"

b="$WORK/busybox"
busybox_rootfs "$b/rootfs"
build busybox "switchyard-lab/busybox:1" "$IMAGES/busybox/Dockerfile" "$b/"

# --- kubernetes-csi sidecars ----------------------------------------------------
if [ -z "$SIDECARS_DIR" ] && [ -n "${HEALTH_MONITOR_SRC:-}" ]; then SIDECARS_DIR=$("$ROOT/scripts/ensure-health-monitor.sh" --sidecars-dir | tail -1) || die "scripts/ensure-health-monitor.sh --sidecars-dir failed (HEALTH_MONITOR_SRC=$HEALTH_MONITOR_SRC)"; fi
if [ -z "$SIDECARS_DIR" ] && [ -x "$ROOT/scripts/ensure-kube.sh" ]; then
	# It prints the directory and exits 3 while the sidecars are not built yet.
	rc=0
	d=$("$ROOT/scripts/ensure-kube.sh" --sidecars-dir 2>/dev/null | tail -1) || rc=$?
	case $rc in
	0) SIDECARS_DIR=$d ;;
	3) say "the sidecars are not built yet (scripts/ensure-kube.sh builds them into $d)" ;;
	*) die "scripts/ensure-kube.sh --sidecars-dir failed (exit $rc)" ;;
	esac
fi
# ensure-kube.sh's directory keeps the binaries in bin/ (beside crd/).
if [ -n "$SIDECARS_DIR" ] && [ -d "$SIDECARS_DIR/bin" ]; then
	SIDECARS_DIR="$SIDECARS_DIR/bin"
fi

# modversion BINARY: the version of the module that provides the binary's main
# package (the sidecars are built from a module that requires them).
modversion() {
	"$GO" version -m "$1" | awk '
		$1 == "path" { path = $2 }
		($1 == "mod" || $1 == "dep") && index(path "/", $2 "/") == 1 && length($2) > best { best = length($2); v = $3 }
		END { print v }'
}

SIDECARS="csi-provisioner csi-attacher csi-resizer csi-snapshotter csi-external-health-monitor-controller snapshot-controller csi-node-driver-registrar livenessprobe"
if [ -z "$SIDECARS_DIR" ]; then
	say "no sidecars directory (--sidecars-dir, SIDECARS_DIR or scripts/ensure-kube.sh): sidecar images left out"
else
	[ -d "$SIDECARS_DIR" ] || die "sidecars directory $SIDECARS_DIR does not exist"
	for s in $SIDECARS; do
		bin="$SIDECARS_DIR/$s"
		if [ ! -x "$bin" ]; then
			case $s in
			csi-node-driver-registrar | livenessprobe) ;; # the lab's stand-in follows
			csi-external-health-monitor-controller)
				# Optional in the chart (off by default); scripts/ensure-kube.sh
				# builds it where the module proxy serves its module.
				say "no $bin: image registry.k8s.io/sig-storage/$s left out (controller.externalHealthMonitor keeps the chart's default image)"
				;;
			*) say "no $bin: image registry.k8s.io/sig-storage/$s left out" ;;
			esac
			continue
		fi
		# A FROM-scratch image has no dynamic loader.
		if readelf -l "$bin" 2>/dev/null | grep -q 'Requesting program interpreter'; then
			die "$bin is dynamically linked; build it with CGO_ENABLED=0"
		fi
		v=$(modversion "$bin")
		case "$v" in
		v[0-9]*) ;;
		*) die "cannot tell the release of $bin from its build info (got \"$v\"); build it from a module that requires a tagged release" ;;
		esac
		sc="$WORK/sidecar-$s"
		mkdir -p "$sc"
		cp "$bin" "$sc/$s"
		sed "s/@BIN@/$s/g" "$IMAGES/sidecar/Dockerfile.in" >"$WORK/Dockerfile.$s"
		build "$s" "registry.k8s.io/sig-storage/$s:$v" "$WORK/Dockerfile.$s" "$sc/"
	done
fi

# lab_values: values for the chart (deploy/charts/switchyard) on a cluster whose
# containerd imported these tarballs: every image by the reference it carries,
# never pulled. Only images in this set are named (a key with no value would
# erase the chart's default for it).
lab_values() {
	local l name ref key
	declare -A refs=()
	for l in "${SET_LINES[@]}"; do
		read -r name ref key <<<"$l"
		refs[$name]=$ref
	done
	# img INDENT NAME: the chart's image map for the image NAME.
	img() {
		local r=${refs[$2]}
		printf '%simage:\n%s  registry: %s\n%s  tag: "%s"\n' "$1" "$1" "${r%:*}" "$1" "${r##*:}"
	}
	echo "# Written by scripts/images.sh for the images in this directory (images.txt)."
	echo "imagePullPolicy: Never"
	echo "controller:"
	echo "  driver:"
	img "    " controller
	local s
	for s in csi-provisioner:externalProvisioner csi-attacher:externalAttacher csi-resizer:externalResizer csi-snapshotter:externalSnapshotter \
		csi-external-health-monitor-controller:externalHealthMonitor; do
		[ -n "${refs[${s%%:*}]:-}" ] || continue
		echo "  ${s#*:}:"
		img "    " "${s%%:*}"
	done
	echo "node:"
	echo "  driver:"
	img "    " node
	if [ -n "${refs[csi-node-driver-registrar]:-}" ]; then
		echo "  driverRegistrar:"
		img "    " csi-node-driver-registrar
	fi
	if [ -n "${refs[livenessprobe]:-}" ]; then
		echo "livenessProbe:"
		img "  " livenessprobe
	fi
}

# --- lab stand-ins for the two node sidecars the module proxy cannot serve -------
# (deploy/labsidecars/README.md). Built only when the sidecars directory has no
# upstream binary for them; lab-values.yaml then names these images.
declare -A LAB_SIDECAR=([csi-node-driver-registrar]=registrar [livenessprobe]=livenessprobe)
for s in csi-node-driver-registrar livenessprobe; do
	if [ -n "$SIDECARS_DIR" ] && [ -x "$SIDECARS_DIR/$s" ]; then
		continue
	fi
	sc="$WORK/lab-$s"
	mkdir -p "$sc"
	(cd "$ROOT/deploy/labsidecars" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" \
		-o "$sc/$s" "./${LAB_SIDECAR[$s]}") || die "go build of deploy/labsidecars/${LAB_SIDECAR[$s]} failed"
	sed "s/@BIN@/$s/g" "$IMAGES/sidecar/Dockerfile.in" >"$WORK/Dockerfile.lab-$s"
	build "$s" "switchyard-lab/$s:$VERSION" "$WORK/Dockerfile.lab-$s" "$sc/"
done

# --- the set --------------------------------------------------------------------
SET_KEY=$(printf '%s\n' "${SET_LINES[@]}" | LC_ALL=C sort | sha)
OUT="$CACHE/images/$SET_KEY"
if [ ! -f "$OUT/.complete" ]; then
	rm -rf "$OUT.tmp"
	mkdir -p "$OUT.tmp"
	for l in "${SET_LINES[@]}"; do
		read -r name ref key <<<"$l"
		ln -f "$CACHE/images/parts/$name-$key.tar" "$OUT.tmp/$name.tar"
		echo "$name.tar $ref" >>"$OUT.tmp/images.txt"
	done
	lab_values >"$OUT.tmp/lab-values.yaml"
	touch "$OUT.tmp/.complete"
	rm -rf "$OUT"
	mv "$OUT.tmp" "$OUT"
fi

# The cache keeps the newest sets (each commit makes one: its version is in
# the switchyard images); a part no set links to any more is removed.
KEEP_SETS=${KEEP_SETS:-5}
touch "$OUT"
ls -1dt "$CACHE"/images/*/ 2>/dev/null | grep -v '/parts/$' | tail -n +$((KEEP_SETS + 1)) | while read -r old; do
	rm -rf "$old"
done
find "$CACHE/images/parts" -maxdepth 1 -name '*.tar' -links 1 -delete
ls -1dt "$CACHE"/node-base/*/ 2>/dev/null | tail -n +3 | while read -r old; do rm -rf "$old"; done

# Docker may have lost an image the cache still has (a fresh data root).
for l in "${SET_LINES[@]}"; do
	read -r name ref key <<<"$l"
	if ! docker image inspect "$ref" >/dev/null 2>&1; then
		docker load -q -i "$OUT/$name.tar" >/dev/null || die "docker load $OUT/$name.tar failed"
	fi
done

say "done in $(($(date +%s) - STARTED)) s; images (docker-archive tarballs):"
while read -r f ref; do
	size=$(docker image inspect -f '{{.Size}}' "$ref")
	printf '  %-38s %6.1f MB  %s\n' "$ref" "$(echo "$size / 1000000" | bc -l)" "$OUT/$f" >&2
done <"$OUT/images.txt"
echo "$OUT"
