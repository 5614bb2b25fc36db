// Package zfsmodel is an in-memory, persisted model of ZFS pools and datasets
// with an emulation of the zfs(8) and zpool(8) command lines.
//
// The model holds pools, filesystems, volumes (zvols), snapshots and clones
// with their native and user properties, inheritance, space accounting and
// send/receive. Filesystem data lives in real directories under
// <StateDir>/mnt/<dataset> and zvol data in sparse files under
// <StateDir>/zvols, so simulators built on it (the ZFS-over-SSH and TrueNAS
// simulators) can export and attach volumes for real.
//
// ZFS and Zpool answer command lines with real zfs's output formats, exit
// codes and error texts (OpenZFS 2.2 behaviour and defaults: compression=on,
// volblocksize=16K). The Go API (Create, Destroy, SetProperty, Snapshot, ...)
// is what the command line is built on; its errors are *Error values whose
// text is exactly what zfs prints.
package zfsmodel
