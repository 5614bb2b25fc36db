#!/usr/bin/env bash
# Makes Debian's zfs-fuse usable for the fidelity test tier: installs the
# package when zfs is missing and starts the zfs-fuse daemon when nothing
# answers on its socket. Idempotent, and quick when all is already there.
#
# Not root: says why and exits 0 (the fidelity tests then skip with that
# reason). As root, a failure exits 1 only when LAB_REQUIRE asks for the
# fidelity tier; otherwise it warns and leaves the skip to the tests.
set -uo pipefail

say() { echo "ensure-zfs-fuse: $*" >&2; }

required() {
	local t req="${LAB_REQUIRE:-}"
	for t in ${req//,/ }; do
		[ "$t" = fidelity ] || [ "$t" = all ] && return 0
	done
	return 1
}

fail() {
	say "$*"
	if required; then exit 1; fi
	say "continuing: the fidelity tier is not in LAB_REQUIRE, its tests will skip"
	exit 0
}

if [ "$(id -u)" != 0 ]; then
	say "not root: installing and running zfs-fuse needs root; the fidelity tests will skip"
	exit 0
fi

PATH="$PATH:/usr/sbin:/sbin"
DAEMON=/usr/sbin/zfs-fuse
# Debian's init script keeps its pidfile here.
PIDFILE=/run/zfs-fuse.pid

if ! command -v zfs >/dev/null || [ ! -x "$DAEMON" ]; then
	export DEBIAN_FRONTEND=noninteractive
	say "installing zfs-fuse"
	# The package lists are refreshed only when they are too old to install from.
	if ! apt-get install -y -q zfs-fuse >/dev/null; then
		apt-get update -q >/dev/null && apt-get install -y -q zfs-fuse >/dev/null ||
			fail "apt-get install zfs-fuse failed"
	fi
fi

# The daemon answers on a unix socket; zpool fails fast when nobody listens.
answers() { sh -c 'zpool list -H; exit $?' >/dev/null 2>&1; }

wait_answer() {
	local i
	for i in $(seq 1 50); do
		answers && return 0
		sleep 0.2
	done
	return 1
}

if answers; then exit 0; fi

# A daemon may be running already (started by hand with another pidfile)
# and still starting up: wait for it rather than start a second one.
if pgrep -x zfs-fuse >/dev/null; then
	wait_answer && exit 0
	# It may have been on its way out; only a live one that never answers is an error.
	pgrep -x zfs-fuse >/dev/null &&
		fail "a zfs-fuse process runs but does not answer on /run/zfs/zfs_socket"
fi

if [ ! -c /dev/fuse ]; then
	command -v modprobe >/dev/null && modprobe fuse 2>/dev/null
	[ -c /dev/fuse ] || fail "/dev/fuse is missing (zfs-fuse needs FUSE; load the fuse module or pass the device in)"
fi

# zfs-fuse refuses to start, silently, while its pidfile exists. A machine
# restored from a disk image keeps /run, so the file of a daemon that died
# with the previous boot is removed (nothing named zfs-fuse runs: see above).
if [ -e "$PIDFILE" ]; then
	say "removing stale $PIDFILE (pid $(cat "$PIDFILE" 2>/dev/null) is not running)"
	rm -f "$PIDFILE"
fi

# As Debian's /etc/init.d/zfs-fuse starts it, without systemd: large
# ulimits, no locale, the pidfile, then mount what the pools hold.
say "starting $DAEMON"
# It takes its lock in /var/lock/zfs and gives up, silently, without it.
mkdir -p "$(readlink -f /var/lock)"
# Only stdin, stdout and stderr go with it: a descriptor it inherited (the
# lab lock of a `flock lab.lock make ...`) would stay held as long as the
# daemon runs.
(
	for p in "/proc/$BASHPID/fd/"*; do
		fd=${p##*/}
		[ "$fd" -gt 2 ] && eval "exec $fd>&-"
	done
	ulimit -v unlimited 2>/dev/null
	ulimit -l unlimited 2>/dev/null
	ulimit -s unlimited 2>/dev/null
	unset LANG
	exec "$DAEMON" --pidfile "$PIDFILE"
) || fail "$DAEMON did not start"
wait_answer || fail "zfs-fuse started but does not answer on /run/zfs/zfs_socket"
if [ -f "$PIDFILE" ] && [ -f "/proc/$(cat "$PIDFILE")/oom_score_adj" ]; then
	echo -1000 >"/proc/$(cat "$PIDFILE")/oom_score_adj" 2>/dev/null
fi
zfs mount -a >/dev/null 2>&1 || say "zfs mount -a failed (pools' filesystems may stay unmounted)"
exit 0
