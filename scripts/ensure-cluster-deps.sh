#!/usr/bin/env bash
# Installs the Debian packages the lab's local Kubernetes cluster
# (lab/cluster) runs: etcd, containerd, runc, the CNI plugins, socat (the
# storage VM node reaches the apiserver through it), openssl (to inspect
# certificates) and busybox-static (the shell of the lab's test pod image). Idempotent: when everything is there it only checks.
#
# The lab runs its own etcd and containerd instances (own ports, sockets and
# data dirs), so the distribution's services are stopped and disabled if the
# installation started them: a system containerd on /run/containerd would
# be confused with Docker's, and a system etcd would hold 2379.
set -uo pipefail

say() { echo "ensure-cluster-deps: $*" >&2; }

# package -> a file that proves it is usable
declare -A proof=(
	[etcd-server]=/usr/bin/etcd
	[containerd]=/usr/bin/containerd
	[runc]=/usr/sbin/runc
	[containernetworking-plugins]=/usr/lib/cni/bridge
	[socat]=/usr/bin/socat
	[openssl]=/usr/bin/openssl
	[iproute2]=/sbin/ip
	[util-linux]=/usr/bin/flock
	[busybox-static]=/bin/busybox
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'; }

missing=()
for pkg in "${!proof[@]}"; do
	# busybox (dynamic) and busybox-static both provide /bin/busybox: only the static one will do.
	if ! installed "$pkg" || [ ! -x "${proof[$pkg]}" ]; then
		missing+=("$pkg")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	say "all present (etcd $(/usr/bin/etcd --version 2>/dev/null | sed -n 's/^etcd Version: //p'), containerd, runc, CNI plugins, socat, openssl, busybox-static)"
	exit 0
fi

fail() {
	say "$*"
	say "the cluster test tier needs: ${missing[*]}"
	exit 1
}
[ "$(id -u)" = 0 ] || fail "not root: cannot install ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
command -v apt-get >/dev/null || fail "no apt-get on this machine: install ${missing[*]} (or their equivalents) by hand"

export DEBIAN_FRONTEND=noninteractive
log=/tmp/ensure-cluster-deps-apt.log
say "installing ${missing[*]}"
# The package lists are refreshed only when they are too old to install from.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
	apt-get update -q >>"$log" 2>&1
	apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1 ||
		fail "apt-get install ${missing[*]} failed; see $log: $(tail -3 "$log" | tr '\n' ' ')"
fi

# Whatever the packages started (with systemd or without it): stop it, and
# keep it from starting at boot. Only the distribution's own daemons are
# touched, by their unit or by the pid of the exact binary path.
for unit in etcd containerd; do
	if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
		systemctl disable --now "$unit" >>"$log" 2>&1 || true
	elif [ -x "/etc/init.d/$unit" ]; then
		"/etc/init.d/$unit" stop >>"$log" 2>&1 || true
		command -v update-rc.d >/dev/null && update-rc.d "$unit" disable >>"$log" 2>&1 || true
	fi
done

for pkg in "${missing[@]}"; do
	[ -x "${proof[$pkg]}" ] || fail "$pkg is installed but ${proof[$pkg]} is missing"
done
say "installed ${missing[*]}"
