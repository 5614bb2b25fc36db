// Package vm runs the lab's storage VM: a Debian kernel under QEMU (TCG) with
// real kernel targets and initiators (nvmet and NVMe/TCP, LIO and open-iscsi,
// nfsd and the NFS client, Samba and cifs) that the host kernel of the lab
// machines lacks.
//
// EnsureImage builds the VM once (a debootstrap root filesystem as an ext4
// image, the host's kernel and its modules, a busybox initramfs) and caches
// it; Run boots it with a host directory shared over 9p as /lab, runs
// /lab/run.sh as root and returns its exit code; RunGoTests runs static Go
// test binaries that way and returns one result per test.
package vm
