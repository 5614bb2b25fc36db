# shellcheck shell=bash
# The roots that locally built images start from, shared by scripts/images.sh
# (switchyard's node image, the lab's busybox) and
# scripts/ensure-e2e-test-images.sh (Kubernetes' e2e test images): a Debian
# minbase made with debootstrap, kept as a tarball, and busybox-static with a
# link per applet. Sourced, not run; the caller defines say and die, keys and
# caches the results itself (each script hashes its own inputs), and calls
# base_cleanup from its EXIT trap.
#
#   base_mirror SUITE             sets MIRROR and DEBOOTSTRAP_KEYRING (array)
#   base_debootstrap SUITE PKGS TAR
#                                 debootstrap --variant=minbase SUITE (with
#                                 --include=PKGS unless empty) from MIRROR,
#                                 trimmed, as the tarball TAR (written whole or
#                                 not at all)
#   base_docker_import TAR REF    docker import TAR as REF unless REF exists
#   busybox_ensure                installs Debian's busybox-static unless
#                                 /bin/busybox is it (BUSYBOX names it)
#   busybox_rootfs DIR            DIR/bin/busybox with its applets as links,
#                                 /etc/passwd and /etc/group with root and
#                                 nobody, a 1777 /tmp
#   base_cleanup                  undoes what an interrupted base_debootstrap
#                                 left (debootstrap's proc/sys mounts, its tree)

# DEBIAN_MIRROR, else this Debian machine's own mirror, else (a GitHub runner
# or another Ubuntu machine: debootstrap makes Debian bases there too, with
# Debian's archive keyring) deb.debian.org.
base_mirror() {
	local suite=$1
	MIRROR=${DEBIAN_MIRROR:-}
	DEBOOTSTRAP_KEYRING=()
	[ -n "$MIRROR" ] || MIRROR=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$MIRROR" ] || MIRROR=$(awk -v s="$suite" '$1 == "deb" && $3 == s {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
	if [ -z "$MIRROR" ]; then
		MIRROR=http://deb.debian.org/debian
		say "no Debian mirror in this machine's apt sources: using $MIRROR (set DEBIAN_MIRROR to choose)"
		DEBOOTSTRAP_KEYRING=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
	fi
}

BASE_TREE=""

base_debootstrap() {
	local suite=$1 pkgs=$2 tar=$3
	local include=()
	[ -z "$pkgs" ] || include=(--include="$pkgs")
	command -v debootstrap >/dev/null || {
		say "installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null || die "apt-get install debootstrap failed"
	}
	if [ ${#DEBOOTSTRAP_KEYRING[@]} -gt 0 ] && [ ! -s /usr/share/keyrings/debian-archive-keyring.gpg ]; then
		say "installing debian-archive-keyring"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debian-archive-keyring >/dev/null || die "apt-get install debian-archive-keyring failed"
	fi
	say "debootstrap $suite minbase${pkgs:+ with $pkgs} from $MIRROR (about a minute)"
	BASE_TREE=$(mktemp -d /tmp/switchyard-base.XXXXXX)
	local log="$BASE_TREE.log"
	debootstrap "${DEBOOTSTRAP_KEYRING[@]}" --variant=minbase "${include[@]}" "$suite" "$BASE_TREE/root" "$MIRROR" >"$log" 2>&1 ||
		{ tail -20 "$log" >&2; die "debootstrap failed (log above)"; }
	rm -f "$log"
	local r="$BASE_TREE/root"
	# What a container never needs. The initiator names are per host: the
	# node image's chart mounts the host's /etc/iscsi and /etc/nvme over
	# these, and an image must never carry one IQN/NQN for every node. (udev's
	# hardware database, 22 MB, serves the host's udev, never the tools in
	# here.) Paths a base lacks cost nothing.
	rm -rf "$r"/var/cache/apt/* "$r"/var/lib/apt/lists/* "$r"/var/log/* \
		"$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* \
		"$r"/usr/share/locale/* "$r"/etc/iscsi/initiatorname.iscsi \
		"$r"/etc/nvme/hostnqn "$r"/etc/nvme/hostid "$r"/etc/machine-id \
		"$r"/usr/lib/udev/hwdb.bin "$r"/usr/lib/udev/hwdb.d
	find "$r/usr/lib" -name __pycache__ -type d -prune -exec rm -rf {} +
	mkdir -p "$(dirname "$tar")"
	tar -C "$r" --numeric-owner -cf "$tar.tmp" . || die "tar of the $suite base failed"
	mv "$tar.tmp" "$tar"
	base_cleanup
}

base_cleanup() {
	[ -n "$BASE_TREE" ] || return 0
	local m
	# Mount points of debootstrap's target have no spaces (mktemp's name).
	# shellcheck disable=SC2013
	for m in $(awk -v r="$BASE_TREE/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$BASE_TREE" "$BASE_TREE.log"
	BASE_TREE=""
}

base_docker_import() {
	local tar=$1 ref=$2
	docker image inspect "$ref" >/dev/null 2>&1 && return 0
	say "importing the base $ref"
	docker import "$tar" "$ref" >/dev/null || die "docker import $tar failed"
}

BUSYBOX=/bin/busybox

busybox_ensure() {
	if ! { [ -x "$BUSYBOX" ] && dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed'; }; then
		say "installing busybox-static"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q busybox-static >/dev/null || die "apt-get install busybox-static failed"
	fi
}

busybox_rootfs() {
	local dir=$1 a
	busybox_ensure
	mkdir -p "$dir/bin" "$dir/etc" "$dir/tmp"
	cp "$BUSYBOX" "$dir/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ "$a" = busybox ] || ln -s busybox "$dir/bin/$a"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$dir/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' >"$dir/etc/group"
	chmod 1777 "$dir/tmp"
}
