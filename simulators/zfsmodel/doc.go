// Package zfsmodel is an in-memory, persisted model of ZFS pools and datasets
// with an emulation of the zfs(8) and zpool(8) command lines.
//
// The model holds pools, filesystems, volumes (zvols), snapshots and clones
// with their native and user properties, inheritance, space accounting and
// send/receive. Filesystem data lives in real directories under
// <StateDir>/mnt/<dataset> (children nest inside their parent's directory,
// as mounts do) and zvol data in sparse files under <StateDir>/zvols, so
// simulators built on it (the ZFS-over-SSH and TrueNAS simulators) can
// export and attach volumes for real: HostPath and ZvolPath map what zfs
// reports to those files. Snapshots keep copies (reflinked or sparse).
//
// ZFS and Zpool answer command lines with the output formats, exit codes
// and error texts of OpenZFS 2.2 (its defaults too: compression=on,
// volblocksize=16K; Options.Defaults can change them). The Go API (Create,
// Destroy, SetProperty, Snapshot, Send, ...) is what the command line is
// built on; its errors are *Error values whose text is exactly what zfs
// prints.
//
// Every mutation is written at once as one small JSON file per changed
// dataset; a background scan keeps the space figures of data written
// behind the model's back (through mounts and block devices) current.
package zfsmodel
