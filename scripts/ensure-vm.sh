#!/usr/bin/env bash
# Installs what the storage VM tier (lab/vm) needs on the host: QEMU, a
# Debian kernel with its modules, debootstrap, a static busybox for the
# initramfs, cpio and xz. Idempotent: when everything is there it only
# checks (well under a second) and says so. Exits 1, naming the packages,
# when they are missing and cannot be installed (not root, no apt-get, or
# apt-get failed).
set -uo pipefail

say() { echo "ensure-vm: $*" >&2; }

# package -> a file that proves it is usable
declare -A proof=(
	[qemu-system-x86]=/usr/bin/qemu-system-x86_64
	[debootstrap]=/usr/sbin/debootstrap
	[busybox-static]=/bin/busybox
	[cpio]=/usr/bin/cpio
	[xz-utils]=/usr/bin/xz
	[e2fsprogs]=/sbin/mkfs.ext4
	[kmod]=/sbin/depmod
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'; }

missing=()
for pkg in "${!proof[@]}"; do
	# busybox (dynamic) and busybox-static both provide /bin/busybox: only the static one will do.
	if ! installed "$pkg" || [ ! -x "${proof[$pkg]}" ]; then
		missing+=("$pkg")
	fi
done
# Any kernel image whose modules are installed: lab/vm picks the newest.
kernel_ok() {
	local k
	for k in /boot/vmlinuz-*; do
		[ -e "$k" ] && [ -f "/lib/modules/${k#/boot/vmlinuz-}/modules.dep" ] && return 0
	done
	return 1
}
kernel_ok || missing+=(linux-image-amd64)

if [ ${#missing[@]} -eq 0 ]; then
	say "all present (qemu, kernel $(cd /boot && ls vmlinuz-* | sed 's/vmlinuz-//' | sort -V | tail -1), debootstrap, busybox-static, cpio)"
	exit 0
fi

fail() {
	say "$*"
	say "the vm test tier needs: ${missing[*]}"
	exit 1
}
[ "$(id -u)" = 0 ] || fail "not root: cannot install ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
command -v apt-get >/dev/null || fail "no apt-get on this machine: install ${missing[*]} (or their equivalents) by hand"

export DEBIAN_FRONTEND=noninteractive
say "installing ${missing[*]}"
# The package lists are refreshed only when they are too old to install from.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/ensure-vm-apt.log 2>&1; then
	apt-get update -q >>/tmp/ensure-vm-apt.log 2>&1
	apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/ensure-vm-apt.log 2>&1 ||
		fail "apt-get install ${missing[*]} failed; see /tmp/ensure-vm-apt.log: $(tail -3 /tmp/ensure-vm-apt.log | tr '\n' ' ')"
fi
for pkg in "${missing[@]}"; do
	[ "$pkg" = linux-image-amd64 ] && continue
	[ -x "${proof[$pkg]}" ] || fail "$pkg is installed but ${proof[$pkg]} is missing"
done
kernel_ok || fail "linux-image-amd64 is installed but no /boot/vmlinuz-* has its /lib/modules"
say "installed ${missing[*]}"
