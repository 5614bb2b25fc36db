#!/bin/busybox sh
# /init of the boot initramfs: load the modules that reach an ext4 root on
# virtio-blk (listed, in load order, in /bootmods.txt), mount it and hand over
# to the root filesystem's PID 1. A failure powers off at once: a hung boot
# would only cost the caller its timeout.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() {
	echo "LAB: initramfs: $*"
	poweroff -f
}
while read -r m; do
	[ -n "$m" ] && { insmod "$m" || echo "LAB: initramfs: insmod $m failed"; }
done </bootmods.txt
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/vda ] || fail "no /dev/vda (virtio-blk) after 10 s"
mount -t ext4 -o rw /dev/vda /newroot || fail "cannot mount /dev/vda"
[ -x /newroot/sbin/lab-init ] || fail "/sbin/lab-init missing on the root filesystem"
umount /proc /sys
mount --move /dev /newroot/dev || umount /dev
exec switch_root /newroot /sbin/lab-init
