#!/usr/bin/env bash
# Makes a Docker engine answer on /var/run/docker.sock for `make image` and
# the container tier: installs Debian's docker.io when dockerd is missing and
# starts dockerd in the background when nothing answers. Idempotent, and
# quick (one `docker info`) when the engine already runs.
#
# dockerd runs with --bridge=none --iptables=false: these machines have no
# bridge/iptables modules to spare and tests only talk to 127.0.0.0/8, so
# every `docker build` and `docker run` uses --network host
# (docs/install.md, ../shared/reference/lab-machine.md).
#
# Debian's docker.io brings Debian's containerd, which dockerd starts for
# itself under /var/run/docker/containerd. The cluster tier's kubelet runs
# its own containerd with its own socket; the two do not share state.
#
# Exits 1 naming the problem when the engine cannot be made to answer.
set -uo pipefail

say() { echo "ensure-docker: $*" >&2; }
fail() {
	say "$*"
	exit 1
}

PATH="$PATH:/usr/sbin:/sbin"
SOCK=/var/run/docker.sock
LOG=/var/log/switchyard-dockerd.log
PIDFILE=/var/run/switchyard-dockerd.pid

answers() { docker -H "unix://$SOCK" info >/dev/null 2>&1; }

if answers; then
	exit 0
fi

[ "$(id -u)" = 0 ] || fail "not root: installing and starting dockerd needs root (or start Docker yourself)"

if ! command -v dockerd >/dev/null; then
	command -v apt-get >/dev/null || fail "no dockerd and no apt-get: install Docker by hand"
	export DEBIAN_FRONTEND=noninteractive
	say "installing docker.io"
	# The package lists are refreshed only when they are too old to install from.
	if ! apt-get install -y -q docker.io >/tmp/ensure-docker-apt.log 2>&1; then
		apt-get update -q >>/tmp/ensure-docker-apt.log 2>&1
		apt-get install -y -q docker.io >>/tmp/ensure-docker-apt.log 2>&1 ||
			fail "apt-get install docker.io failed (see /tmp/ensure-docker-apt.log)"
	fi
fi
command -v docker >/dev/null || fail "dockerd is installed but the docker client is not on PATH"

wait_answer() {
	local i
	for i in $(seq 1 150); do
		answers && return 0
		sleep 0.2
	done
	return 1
}

# A dockerd may be starting already (another make, or started by hand): wait
# for it rather than start a second one on the same data root.
if pgrep -x dockerd >/dev/null; then
	wait_answer && exit 0
	pgrep -x dockerd >/dev/null && fail "a dockerd process runs but does not answer on $SOCK (see $LOG)"
fi

# A socket left behind by a dockerd that died makes the new one refuse to start.
[ -S "$SOCK" ] && rm -f "$SOCK"

say "starting dockerd (log: $LOG)"
# setsid: the daemon must outlive this script and the make that ran it.
# Only stdin, stdout and stderr go with it: a descriptor it inherited (the
# lab lock of a `flock lab.lock make ...`) would stay held as long as it runs.
(
	for p in "/proc/$BASHPID/fd/"*; do
		fd=${p##*/}
		[ "$fd" -gt 2 ] && eval "exec $fd>&-"
	done
	exec setsid dockerd --bridge=none --iptables=false --ip-masq=false \
		--host "unix://$SOCK" --pidfile "$PIDFILE" >>"$LOG" 2>&1 </dev/null
) &
wait_answer || fail "dockerd started but does not answer on $SOCK after 30 s (see $LOG)"
say "dockerd answers (pid $(cat "$PIDFILE" 2>/dev/null))"
exit 0
