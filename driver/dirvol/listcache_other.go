//go:build !linux

package dirvol

// statDir caches nothing outside Linux: the change time's field differs
// per platform, and the listing cache is only trusted with it.
func statDir(string) (dirKey, error) { return dirKey{}, errNoStat }
