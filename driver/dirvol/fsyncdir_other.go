//go:build !linux

package dirvol

// newNameSyncedByFileFsync is false outside Linux: the portable sequence
// (fsyncdir.go).
func newNameSyncedByFileFsync(string) bool { return false }
