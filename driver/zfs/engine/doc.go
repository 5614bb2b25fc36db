// Package engine is the CSI controller shared by every backend that keeps
// volumes as ZFS datasets and zvols: zfs-generic-* (driver/zfsgeneric) and
// the TrueNAS family (driver/truenas). It owns what makes a volume the same
// whichever host holds it: volume and snapshot ids, democratic-csi's user
// properties, volume_context assembly, snapshots (attached and detached),
// clones, listing and paging, expansion, capacity, and completing a volume
// an earlier call left half-made.
//
// A backend supplies a Platform (datasets, a Sharer, the zvol name limit,
// the smallest quota, permissions, Close) and builds the controller with
// New. CLIHost is the part of a Platform for hosts driven by the zfs
// command line over SSH or locally; ReadCLI reads its keys (sshConnection.*,
// zfs.cli.*) and Validate the keys every ZFS backend shares.
package engine
