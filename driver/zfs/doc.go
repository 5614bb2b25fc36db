// Package zfs drives the zfs and zpool command-line tools on a storage host,
// over SSH or locally: it builds commands whose every value is quoted for a
// POSIX shell (nothing from a StorageClass parameter or a volume name is
// ever interpreted remotely), runs them through an Executor, and parses
// their tab-separated output. Errors carry zfs's own message and can be
// classified (not found, exists, busy, dependent clones, out of space).
package zfs
