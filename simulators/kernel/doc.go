// Package kernel makes the simulators' storage objects real on a Linux
// kernel with the target modules: NVMe-oF subsystems in nvmet's configfs,
// iSCSI targets in LIO's configfs, NFS exports through nfsd and SMB shares
// through Samba. The storage VM of the lab runs the simulators with a
// Reconciler so that initiators (nvme connect, iscsiadm, mount -t nfs,
// mount -t cifs) attach their volumes for real; elsewhere the simulators
// only model them.
//
// A Reconciler takes a desired State per owner (one simulator instance) and
// changes the kernel to match it with the fewest changes: objects are
// compared with what configfs, the exports files and smb.conf hold, and
// only differences are written. Regular files (zvols' sparse backing files)
// are served through loop devices, which are refreshed (losetup -c, nvmet
// revalidate_size) when their file grows. Several owners share one kernel:
// each owns its subsystems, targets, exports and shares; nvmet ports are
// shared by address and removed when no subsystem uses them; loop devices
// and bind mounts are shared by path. Ownership is kept in a ledger under
// Options.StateDir (on tmpfs, so it lives exactly as long as the kernel's
// state), guarded by a file lock so that simulators in separate processes
// can share the kernel too.
//
// nfsd (rpcbind, rpc.mountd, rpc.nfsd) and smbd are started on first use.
// Every command goes through Options.Exec, so tests can replace it.
package kernel
