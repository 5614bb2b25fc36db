// Package fidelity checks the ZFS model (package zfsmodel) against real
// zfs: the same zfs command scripts run against Debian's zfs-fuse and
// against the model, and their stdout, stderr and exit codes must agree
// once volatile values (creation times, guids, space figures) are masked.
//
// The package holds the small helpers the comparison needs (running real
// zfs, file-backed pools, the output normaliser); the comparison itself is
// its test, in the "fidelity" tier (root and a running zfs-fuse).
package fidelity
