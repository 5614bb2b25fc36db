#!/bin/sh
# /lab/run.sh of the Kubernetes node in the storage VM (lab/cluster vmnode.go
# writes it with the rest of /lab/node). It turns the booted lab VM into a
# kubelet node of the host's control plane and stays up until the host writes
# /lab/stop: cgroup v2, the kernel's container networking, iscsid, containerd
# with the image tarballs imported, the storage simulators with their targets
# in this kernel (--kernel), then the kubelet. The host follows the
# "LAB: <event>" console lines; keep their wording. Logs go to /lab/logs so
# the host can read them while the VM runs and after it stopped.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
say() { echo "LAB: $* uptime=$(cut -d' ' -f1 /proc/uptime)"; }
fail() {
	say "node-failed: $*"
	exit 1
}
. /lab/node/node.env || fail "no /lab/node/node.env"
LOGS=/lab/logs
mkdir -p "$LOGS"

hostname "$NODE_NAME"
echo "$NODE_NAME" >/etc/hostname
echo "127.0.0.1 localhost $NODE_NAME" >/etc/hosts
# cadvisor reports it; the image's is empty.
[ -s /etc/machine-id ] || tr -d - </proc/sys/kernel/random/uuid >/etc/machine-id
# The kubelet gives pods the node's resolv.conf; the VM has no DNS.
[ -e /etc/resolv.conf ] || : >/etc/resolv.conf

# The node's address, also the one the host reaches the kubelet at (vmnode.go
# owns it on a host interface and forwards it here): kubelet wants it on an
# interface of this machine.
ip addr add "$NODE_IP/32" dev eth0 || fail "adding $NODE_IP to eth0"

# cgroup v2 with the controllers the kubelet puts pods under.
mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "mounting cgroup2"
for c in cpuset cpu io memory hugetlb pids; do
	echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
done

# Container networking: overlay for containerd's snapshots, a bridge and
# veths for the CNI plugins, bridge netfilter for the kubelet's checks.
for m in overlay bridge veth br_netfilter nf_conntrack; do
	modprobe "$m" || say "modprobe $m failed"
done
sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 2>/dev/null
mkdir -p /etc/cni/net.d /var/lib/kubelet /var/log/pods /var/lib/containerd /run/containerd
cp /lab/node/cni.conflist /etc/cni/net.d/10-lab.conflist

# The kubernetes service's ClusterIP, as on the host node (there is no
# kube-proxy): pods reach the apiserver through it and QEMU's guest forward.
ip addr add "$SERVICE_IP/32" dev lo || fail "adding $SERVICE_IP"
socat "TCP-LISTEN:443,bind=$SERVICE_IP,fork,reuseaddr" "TCP:$APISERVER" >"$LOGS/service-forwarder.log" 2>&1 &

# The storage clients a node loads at boot: nvme connect fails with "Failed
# to scan topology" while nvme-tcp (with nvme-fabrics and nvme-core) is not
# loaded, and the node plugin's container cannot load modules itself.
for m in nvme-tcp iscsi_tcp nfs nfsv4 cifs; do
	modprobe "$m" || say "modprobe $m failed"
done

# The initiators' daemon: node plugins run iscsiadm, which talks to it
# (there is no systemd to socket-activate it).
iscsid || say "iscsid did not start"

# The image store (lab/cluster vmstore.go): containerd's root with the
# images already imported by the host, on a disk of its own (a throw-away
# snapshot of a cached file). Then there is nothing to import.
if [ -n "$IMAGE_STORE" ]; then
	mount "LABEL=$IMAGE_STORE" /var/lib/containerd || fail "mounting the image store (label $IMAGE_STORE)"
fi

containerd --config /lab/node/containerd.toml >"$LOGS/containerd.log" 2>&1 &
i=0
until ctr version >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "containerd did not answer in 30 s (see logs/containerd.log)"
	sleep 0.1
done
say containerd-ready

# All at once: each ctr is a large Go program, slow to start under TCG.
# (wait for these only: containerd and the forwarder are children too.)
imports=
for img in $IMAGES; do
	(
		ctr -n k8s.io images import "/lab/images/$img" >"$LOGS/images-$img.log" 2>&1
		echo $? >"/run/import-$img.rc"
	) &
	imports="$imports $!"
done
for p in $imports; do
	wait "$p"
done
for img in $IMAGES; do
	[ "$(cat "/run/import-$img.rc")" = 0 ] || fail "importing $img (see logs/images-$img.log)"
done
say images-imported

# The simulators' state on a filesystem of its own: their shares are bind
# mounts of it, and nfsd exports them with OpenZFS's "mountpoint" option,
# which mountd checks by the device number (a bind mount within the root
# filesystem would not count, and the export would be empty).
mkdir -p /var/lib/switchyard-sim && mount -t tmpfs -o mode=0755 switchyard-sim /var/lib/switchyard-sim ||
	fail "mounting the simulators' tmpfs"

# Storage simulators: node/sim-<name>.sh each (their arguments may hold
# credentials: they stay in the share, off the console).
for name in $SIMULATORS; do
	"/lab/node/sim-$name.sh" >"$LOGS/sim-$name.log" 2>&1 &
	echo $! >"/run/sim-$name.pid"
done
[ -z "$SIMULATORS" ] || say simulators-started

# shellcheck disable=SC2086 # KUBELET_ARGS is a list of words
/lab/bin/kubelet $KUBELET_ARGS >"$LOGS/kubelet.log" 2>&1 &
KUBELET=$!
say kubelet-started

rc=0
while [ ! -e /lab/stop ]; do
	if ! kill -0 $KUBELET 2>/dev/null; then
		say "node-failed: the kubelet exited (see logs/kubelet.log)"
		tail -n 20 "$LOGS/kubelet.log"
		rc=1
		break
	fi
	# Shares the host asks to have mounted for this node's controller
	# (node/mounts.sh says how; e2e/cmd/e2e-lab asks).
	/lab/node/mounts.sh /lab/mounts "$MOUNT_ROOT" >>"$LOGS/mounts.log" 2>&1
	for f in /run/sim-*.pid; do
		[ -e "$f" ] || continue
		if ! kill -0 "$(cat "$f")" 2>/dev/null; then
			name=${f#/run/sim-}
			name=${name%.pid}
			say "simulator-exited: $name (see logs/sim-$name.log)"
			rm -f "$f"
		fi
	done
	sleep 1
done

say node-stopping
# The disk is a throw-away snapshot: stop what holds state elsewhere (the
# kubelet's node lease, the simulators' connections) and power off; the
# pods' containers end with the VM. The host waits 10 s for this.
kill $KUBELET 2>/dev/null
for f in /run/sim-*.pid; do
	[ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null
done
i=0
while [ $i -lt 30 ] && { kill -0 $KUBELET 2>/dev/null || pgrep -f /lab/bin/switchyard-lab >/dev/null; }; do
	sleep 0.1
	i=$((i + 1))
done
say node-stopped
exit $rc
