#!/usr/bin/env bash
# Builds kubernetes-csi's csi-external-health-monitor-controller from a local
# source checkout and caches it by content key:
#
#   /var/cache/switchyard-lab/health-monitor/<key>/bin/csi-external-health-monitor-controller
#
# Why not `go install` like the other sidecars (scripts/ensure-kube.sh): the
# Go module proxy answers 403 for github.com/kubernetes-csi/external-health-monitor
# (@latest and @v0.18.0 when checked), so the only way to a real binary is a source
# checkout that someone provides. Upstream vendors its dependencies, so the
# build runs offline (-mod=vendor, GOPROXY=off, GOFLAGS cleared).
#
# The binary must say which release it is: scripts/images.sh tags the image
# with the version in its build info. The source is therefore built from a
# scratch git repository whose one commit carries the release tag, so that
# Go's VCS stamping writes that tag as the main module's version.
#
# usage: scripts/ensure-health-monitor.sh [--print-dir | --sidecars-dir]
#   builds what is missing and prints the directory (bin/ inside) on stdout's last line
#   --print-dir: prints it without building; exit 3 if it is not built yet
#   --sidecars-dir: builds it, then prints a sidecars directory for
#     scripts/images.sh (SIDECARS_DIR / --sidecars-dir): bin/ with links to
#     every binary of `scripts/ensure-kube.sh --sidecars-dir` and to the monitor
#       SIDECARS_DIR=$(HEALTH_MONITOR_SRC=... scripts/ensure-health-monitor.sh --sidecars-dir) make e2e
# env:
#   HEALTH_MONITOR_SRC      the source: a git directory (bare or not: its
#                           HEALTH_MONITOR_REF is built) or a plain directory
#                           (a checkout or an unpacked release)
#   HEALTH_MONITOR_REF      for a git source: the tag to build (default: the
#                           newest v* tag on HEAD, else the newest v* tag)
#   HEALTH_MONITOR_VERSION  for a plain directory that is no git work tree
#                           with a tag on HEAD: the release it holds (v0.18.0)
#   SWITCHYARD_LAB_CACHE    default /var/cache/switchyard-lab
#   GO                      default go
#
# Exit status: 0 built (or found), 1 a failure (said on stderr), 3 nothing
# to build from: HEALTH_MONITOR_SRC unset (callers skip the health monitor
# then; scripts/images.sh leaves its image out, the e2e health spec skips).
set -euo pipefail

say() { echo "ensure-health-monitor: $*" >&2; }
die() {
	say "$*"
	exit 1
}

NAME=csi-external-health-monitor-controller
MODULE=github.com/kubernetes-csi/external-health-monitor
CACHE=${SWITCHYARD_LAB_CACHE:-/var/cache/switchyard-lab}
GO=${GO:-go}
command -v "$GO" >/dev/null || GO=/usr/local/go/bin/go
LDFLAGS="-s -w"
# Bump when the way the binary is built changes (the key hashes the rest).
RECIPE=1

PRINT_ONLY=0
SIDECARS=0
case "${1:-}" in
--print-dir) PRINT_ONLY=1 ;;
--sidecars-dir) SIDECARS=1 ;;
"") ;;
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
*) die "unknown argument $1 (see --help)" ;;
esac

SRC=${HEALTH_MONITOR_SRC:-}
if [ -z "$SRC" ]; then
	say "HEALTH_MONITOR_SRC is not set: no $NAME to build. The Go module proxy refuses $MODULE (403),"
	say "so it needs a source checkout (git directory or plain directory with vendor/): HEALTH_MONITOR_SRC=<dir>"
	exit 3
fi
[ -e "$SRC" ] || die "HEALTH_MONITOR_SRC=$SRC does not exist"
SRC=$(cd "$SRC" && pwd)

WORK=$(mktemp -d /tmp/switchyard-health-monitor.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# --- what to build: a tree, its content key and its release ------------------
# A git directory (bare, a mirror, or a work tree's .git) is read through git,
# a plain directory by its files.
is_git_dir() { [ -f "$1/HEAD" ] && [ -d "$1/objects" ] && git --git-dir="$1" rev-parse --git-dir >/dev/null 2>&1; }

TREE="$WORK/src"
mkdir -p "$TREE"
if is_git_dir "$SRC"; then
	G=(git --git-dir="$SRC")
	REF=${HEALTH_MONITOR_REF:-}
	if [ -z "$REF" ]; then
		REF=$("${G[@]}" tag --points-at HEAD --list 'v*' --sort=-v:refname | head -1)
		[ -n "$REF" ] || REF=$("${G[@]}" tag --list 'v*' --sort=-v:refname | head -1)
		[ -n "$REF" ] || die "$SRC has no v* tag: name the release with HEALTH_MONITOR_REF"
	fi
	"${G[@]}" rev-parse -q --verify "$REF^{commit}" >/dev/null || die "$SRC has no $REF (HEALTH_MONITOR_REF)"
	VERSION=$REF
	case "$VERSION" in v[0-9]*) ;; *) VERSION=${HEALTH_MONITOR_VERSION:-} ;; esac
	[ -n "$VERSION" ] || die "$REF is not a release tag: set HEALTH_MONITOR_VERSION to the release it holds"
	# The tree's hash is its content: equal trees share a build.
	CONTENT=$("${G[@]}" rev-parse "$REF^{tree}")
	FROM="$SRC at $REF"
else
	[ -d "$SRC" ] || die "HEALTH_MONITOR_SRC=$SRC is neither a directory nor a git directory"
	VERSION=${HEALTH_MONITOR_VERSION:-}
	if [ -z "$VERSION" ] && git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		VERSION=$(git -C "$SRC" tag --points-at HEAD --list 'v*' --sort=-v:refname | head -1)
	fi
	[ -n "$VERSION" ] || die "$SRC is no git work tree with a v* tag on HEAD: set HEALTH_MONITOR_VERSION to the release it holds (v0.18.0)"
	CONTENT=$(
		cd "$SRC"
		find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-40
	)
	FROM="$SRC ($VERSION)"
fi
case "$VERSION" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) die "version $VERSION is not a release (vX.Y.Z)" ;;
esac

GOVERSION=$("$GO" env GOVERSION) || die "no Go ($GO)"
KEY=$(printf 'recipe=%s\ncontent=%s\nversion=%s\ngo=%s %s/%s\nldflags=%s\n' "$RECIPE" "$CONTENT" "$VERSION" \
	"$GOVERSION" "$("$GO" env GOOS)" "$("$GO" env GOARCH)" "$LDFLAGS" | sha256sum | cut -c1-20)
DEST="$CACHE/health-monitor/$KEY"

# sidecars_dir: the monitor beside the sidecars scripts/ensure-kube.sh
# built (links, remade on every call: either set may change), in a
# directory named after both sets.
sidecars_dir() {
	local rc=0 kube
	kube=$("$(dirname "$0")/ensure-kube.sh" --sidecars-dir | tail -1) || rc=$?
	[ $rc = 0 ] || die "scripts/ensure-kube.sh --sidecars-dir exited $rc: build the other sidecars first (scripts/ensure-kube.sh)"
	local out tmp b
	out="$DEST/with-$(basename "$kube")"
	tmp=$(mktemp -d "$out.tmp.XXXXXX")
	mkdir -p "$tmp/bin"
	for b in "$kube"/bin/*; do
		[ "$(basename "$b")" = "$NAME" ] || ln -s "$b" "$tmp/bin/"
	done
	ln -s "$DEST/bin/$NAME" "$tmp/bin/$NAME"
	if [ -d "$kube/crd" ]; then ln -s "$kube/crd" "$tmp/crd"; fi
	rm -rf "$out"
	chmod 0755 "$tmp"
	mv "$tmp" "$out"
	echo "$out"
}

if [ -x "$DEST/bin/$NAME" ]; then
	[ "$SIDECARS" = 1 ] && { sidecars_dir; exit 0; }
	echo "$DEST"
	exit 0
fi
if [ "$PRINT_ONLY" = 1 ]; then
	echo "$DEST"
	exit 3
fi

# --- the source, checked, in a scratch git repository ---------------------------
if is_git_dir "$SRC"; then
	"${G[@]}" archive "$REF" | tar -x -C "$TREE" || die "git archive $REF of $SRC failed"
else
	tar -C "$SRC" --exclude=./.git -cf - . | tar -x -C "$TREE" || die "copying $SRC failed"
fi
grep -qs "^module $MODULE\$" "$TREE/go.mod" || die "$FROM is not $MODULE (its go.mod names another module)"
[ -f "$TREE/vendor/modules.txt" ] || die "$FROM has no vendor/ directory: this build is offline (-mod=vendor)"
[ -d "$TREE/cmd/$NAME" ] || die "$FROM has no cmd/$NAME"

# One commit tagged with the release: Go stamps the tag as the main module's
# version (go version -m shows "mod $MODULE $VERSION").
git -C "$TREE" init -q -b release
git -C "$TREE" -c user.name=switchyard-lab -c user.email=lab@switchyard.invalid add -A
git -C "$TREE" -c user.name=switchyard-lab -c user.email=lab@switchyard.invalid -c commit.gpgsign=false commit -q -m "$FROM"
git -C "$TREE" -c tag.gpgsign=false tag "$VERSION"

# --- build, once per key -------------------------------------------------------
mkdir -p "$CACHE/health-monitor"
exec 9>"$DEST.lock"
flock 9
if [ -x "$DEST/bin/$NAME" ]; then
	[ "$SIDECARS" = 1 ] && { sidecars_dir; exit 0; }
	echo "$DEST"
	exit 0
fi

TMP=$(mktemp -d "$DEST.tmp.XXXXXX")
say "building $NAME $VERSION from $FROM (offline, -mod=vendor; cold: about 15 min on a loaded 2-core machine)"
start=$SECONDS
if ! (cd "$TREE" && env GOTOOLCHAIN=local GOFLAGS= GOPROXY=off GOWORK=off CGO_ENABLED=0 \
	"$GO" build -mod=vendor -buildvcs=true -trimpath -ldflags="$LDFLAGS" -o "$TMP/bin/$NAME" "./cmd/$NAME") >"$TMP/build.log" 2>&1; then
	say "go build failed; the end of $TMP/build.log:"
	tail -20 "$TMP/build.log" >&2
	exit 1
fi
got=$("$GO" version -m "$TMP/bin/$NAME" | awk '$1 == "mod" {print $3}')
[ "$got" = "$VERSION" ] || die "the binary says its module is at \"$got\", not $VERSION (VCS stamping did not happen: see $TMP/build.log)"
{
	echo "built $(date -u +%FT%TZ) in $((SECONDS - start))s"
	echo "from: $FROM"
	echo "content: $CONTENT"
	echo "version: $VERSION"
	echo "go: $GOVERSION"
	echo "flags: -mod=vendor -buildvcs=true -trimpath -ldflags=\"$LDFLAGS\""
} >"$TMP/BUILDINFO"
rm -f "$TMP/build.log"
chmod 0755 "$TMP"
mv "$TMP" "$DEST"
rm -f "$DEST.lock"
say "built $NAME $VERSION in $((SECONDS - start))s into $DEST"
[ "$SIDECARS" = 1 ] && { sidecars_dir; exit 0; }
echo "$DEST"
