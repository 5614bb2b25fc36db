#!/bin/sh
# PID 1 of the lab VM (there is no systemd). It mounts the basics and configfs,
# starts udev unless the kernel command line says lab.noudev, configures eth0
# when it says lab.net (QEMU user networking: the host reaches the guest only
# through its forwarded ports), mounts the host's 9p share at /lab, runs
# /lab/run.sh, writes its exit code to /lab/rc and powers off. The host reads
# the "LAB: <event>" lines on the console; keep their wording.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
say() { echo "LAB: $* uptime=$(cut -d' ' -f1 /proc/uptime)"; }
off() {
	# Only the 9p share keeps anything (the disks are snapshot=on). A plain
	# sync would wait for ever on an NFS or CIFS mount whose server is gone.
	sync -f /lab 2>/dev/null
	echo o >/proc/sysrq-trigger
	sleep 30
}
on_cmdline() { grep -qw "$1" /proc/cmdline; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
# The initramfs moved its devtmpfs here; mount one only if it did not.
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# A fresh /run: daemons find no stale pid files. Samba and rpcbind expect
# their directories to exist.
mount -t tmpfs tmpfs /run
mkdir -p /run/lock /run/samba /run/rpcbind /run/sendsigs.omit.d
mount -t tmpfs tmpfs /tmp
modprobe configfs 2>/dev/null
mount -t configfs configfs /sys/kernel/config
hostname lab
ip link set lo up
say base-ready

# udev makes the /dev/disk/by-* links of the devices that tests attach.
# Only block devices are replayed at start: a full coldplug would load some
# 35 modules for emulated hardware nobody uses, 14 s under TCG.
if ! on_cmdline lab.noudev; then
	/lib/systemd/systemd-udevd --daemon
	udevadm trigger --action=add --subsystem-match=block
	udevadm settle -t 30
	say udev-ready
fi

if on_cmdline lab.net; then
	modprobe virtio_net
	i=0
	while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up && ip route add default via 10.0.2.2 &&
		say net-ready || say "net-failed: eth0 not configured"
fi

mkdir -p /lab
if modprobe 9pnet_virtio && modprobe 9p &&
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 lab /lab; then
	say share-mounted
else
	say "share-failed: the 9p share could not be mounted"
fi

if [ -f /lab/run.sh ]; then
	say run-start
	cd /lab
	# The exit code goes through a file: in a pipeline $? would be tee's.
	{
		if [ -x /lab/run.sh ]; then /lab/run.sh; else sh /lab/run.sh; fi
		echo $? >/run/lab-rc
	} </dev/null 2>&1 | tee /lab/run.log
	cd /
	if [ -f /run/lab-rc ]; then
		cp /run/lab-rc /lab/rc
		say "run-finished rc=$(cat /run/lab-rc)"
	else
		say "run-finished rc=unknown"
	fi
else
	say "shell: no /lab/run.sh; power off with 'exit'"
	setsid -c -w bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
fi
off
