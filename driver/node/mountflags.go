package node

import "slices"

// mountFlags merges a volume's mount options: the capability's mount_flags
// (StorageClass mountOptions), then the secret "mount_flags" (csv), then
// "defaults", each once. Flags from secrets are returned apart as
// sensitive: they may carry credentials and are never logged.
func mountFlags(v *Volume) (plain, sensitive []string) {
	seen := map[string]bool{}
	add := func(list *[]string, f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			*list = append(*list, f)
		}
	}
	for _, f := range v.Capability.GetMount().GetMountFlags() {
		add(&plain, f)
	}
	add(&plain, "defaults")
	for _, f := range csv(normalizedSecrets(v)[SecretMountFlags]) {
		add(&sensitive, f)
	}
	return plain, sensitive
}

// hasFlag reports whether a flag (or a key=value flag with that key) is in
// any of the lists.
func hasFlag(key string, lists ...[]string) bool {
	for _, l := range lists {
		if slices.ContainsFunc(l, func(f string) bool { return f == key || len(f) > len(key) && f[:len(key)+1] == key+"=" }) {
			return true
		}
	}
	return false
}

// without returns flags minus the given ones.
func without(flags []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(flags), func(f string) bool { return slices.Contains(drop, f) })
}
