#!/bin/sh
# Host side of the Kubernetes node in the storage VM, started by Local.Spawn
# (lab/cluster vmnode.go) so that the cluster's Stop -- from any process,
# `switchyard-lab cluster down` too -- ends it: it owns the node's address on
# the host and QEMU.
#
# usage: vm-host.sh <env file> <qemu argv...>
# The env file sets NODE_IP (the node's InternalIP), LINK (a veth name of at
# most 14 characters), SHARE (the VM's /lab) and GRACE (tenths of a second
# the guest gets to stop).
#
# The node IP goes on a veth pair of its own (this kernel has no dummy
# devices): QEMU forwards NODE_IP:<kubelet port> into the guest, so the
# apiserver reaches the kubelet at the node's address (kubectl logs/exec).
# Connections to it must come from 127.0.0.1: QEMU passes any other client
# address on to the guest, which owns NODE_IP too and would answer itself;
# for a loopback client it uses its gateway address 10.0.2.2. Hence the
# local route's preferred source.
# QEMU runs in its own session: the SIGTERM that Stop sends to this process
# group must not kill it before the guest has stopped its pods and
# simulators; on SIGTERM this script writes $SHARE/stop, gives the guest
# GRACE (10 s; Stop's grace is 15 s), then kills QEMU (and the socat
# processes of its guest forward, in its session) and removes the veth.
set -u
. "$1" || exit 1
shift
ip link del "$LINK" 2>/dev/null
if ! { ip link add "$LINK" type veth peer name "${LINK}p" &&
	ip addr add "$NODE_IP/32" dev "$LINK" &&
	ip route replace local "$NODE_IP" dev "$LINK" table local proto kernel scope host src 127.0.0.1 &&
	ip link set "${LINK}p" up && ip link set "$LINK" up; }; then
	echo "vm-host: cannot put $NODE_IP on a veth $LINK"
	ip link del "$LINK" 2>/dev/null
	exit 1
fi
rm -f "$SHARE/stop"
# QEMU 7.2's TCG has crashed (SIGSEGV, exit 139) while still in the BIOS,
# before the guest ran anything (1 of ~100 CI boots): that is the emulator's
# fault, not the guest's, and the disks are snapshot=on, so such an early
# crash is retried once. A crash after EARLY seconds is not: the guest may
# have registered the node and started pods by then.
EARLY=20
start_qemu() {
	STARTED=$(date +%s)
	setsid "$@" &
	QEMU=$!
}
start_qemu "$@"
RETRIED=0
stop() {
	touch "$SHARE/stop"
	i=0
	while [ $i -lt "$GRACE" ] && kill -0 $QEMU 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	# dash's kill takes a process group as -9 -PGID only.
	kill -9 -$QEMU 2>/dev/null
	wait $QEMU
	ip link del "$LINK" 2>/dev/null
	echo "vm-host: stopped"
	exit 0
}
trap stop TERM INT HUP
while :; do
	wait $QEMU
	rc=$?
	case $rc in
	132 | 134 | 135 | 139) ;; # SIGILL, SIGABRT, SIGBUS, SIGSEGV
	*) break ;;
	esac
	[ $RETRIED -eq 0 ] && [ $(($(date +%s) - STARTED)) -lt $EARLY ] && [ ! -e "$SHARE/stop" ] || break
	RETRIED=1
	echo "vm-host: QEMU crashed with $rc after $(($(date +%s) - STARTED)) s, during boot; starting it again once"
	start_qemu "$@"
done
ip link del "$LINK" 2>/dev/null
echo "vm-host: QEMU exited with $rc"
exit $rc
