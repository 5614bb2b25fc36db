package zfsmodel

import (
	"fmt"
	"strings"
)

// Limits from OpenZFS (include/sys/fs/zfs.h, module/zcommon/zfs_namecheck.c).
const (
	maxNameLen     = 256 // ZFS_MAX_DATASET_NAME_LEN, including the NUL: names are at most 255 bytes
	maxNesting     = 50  // zfs_max_dataset_nesting
	maxPropNameLen = 256 // ZAP_MAXNAMELEN
	maxPropLen     = 4096
	maxUserValLen  = 8192 // ZAP_MAXVALUELEN
)

func validNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == ':' || c == ' '
}

// nameCheck mirrors libzfs zfs_validate_name: it returns "" when path is a
// valid name for one of types, else the explanation zfs prints after the
// colon. modifying rejects '%' (reserved for temporary names).
func nameCheck(path string, types Type, modifying bool) string {
	if types&Snapshot == 0 && strings.Contains(path, "@") {
		return "snapshot delimiter '@' is not expected here"
	}
	if types == Snapshot && !strings.Contains(path, "@") {
		return "missing '@' delimiter in snapshot name"
	}
	if strings.Contains(path, "#") {
		return "bookmark delimiter '#' is not expected here"
	}
	if modifying && strings.Contains(path, "%") {
		return "invalid character % in name"
	}
	return entityCheck(path)
}

// entityCheck mirrors entity_namecheck.
func entityCheck(path string) string {
	if len(path) >= maxNameLen {
		return "name is too long"
	}
	if strings.HasPrefix(path, "/") {
		return "leading slash in name"
	}
	if path == "" {
		return "empty component or misplaced '@' or '#' delimiter in name"
	}
	start, foundDelim := 0, false
	for {
		end := start
		for end < len(path) && path[end] != '/' && path[end] != '@' && path[end] != '#' {
			end++
		}
		if end == len(path) && path[end-1] == '/' {
			return "trailing slash in name"
		}
		for i := start; i < end; i++ {
			if c := path[i]; !validNameChar(c) && c != '%' {
				return fmt.Sprintf("invalid character '%c' in name", c)
			}
		}
		if end == len(path) || path[end] == '/' {
			switch path[start:end] {
			case ".":
				return "self reference, '.' is found in name"
			case "..":
				return "parent reference, '..' is found in name"
			}
		}
		if end < len(path) && (path[end] == '@' || path[end] == '#') {
			if foundDelim {
				return "multiple '@' and/or '#' delimiters in name"
			}
			foundDelim = true
		}
		if start == end {
			return "empty component or misplaced '@' or '#' delimiter in name"
		}
		if end == len(path) {
			return ""
		}
		if path[end] == '/' && foundDelim {
			return "trailing slash in name"
		}
		start = end + 1
	}
}

// nestingDepth counts the '/' before any '@'.
func nestingDepth(path string) int {
	if i := strings.IndexAny(path, "@#"); i >= 0 {
		path = path[:i]
	}
	return strings.Count(path, "/")
}

// poolNameCheck is a reduced zpool_name_valid: pools must begin with a
// letter, use dataset name characters and avoid the vdev keywords.
func poolNameCheck(name string) string {
	if name == "" {
		return "name is empty"
	}
	if len(name) >= maxNameLen {
		return "name is too long"
	}
	c := name[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return "name must begin with a letter"
	}
	for i := 0; i < len(name); i++ {
		if !validNameChar(name[i]) {
			return fmt.Sprintf("invalid character '%c' in pool name", name[i])
		}
	}
	for _, r := range []string{"mirror", "raidz", "draid", "spare", "log"} {
		if strings.HasPrefix(name, r) {
			return "name is reserved"
		}
	}
	return ""
}

// splitSnap splits "fs@snap" into "fs" and "snap" (snap "" when no '@').
func splitSnap(name string) (string, string) {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}

// parentName returns the parent dataset of name ("" for a pool).
func parentName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

// poolOf returns the pool component of a dataset or snapshot name.
func poolOf(name string) string {
	if i := strings.IndexAny(name, "/@"); i >= 0 {
		return name[:i]
	}
	return name
}

// isDescendant reports whether name is strictly below ds ("ds/...").
func isDescendant(ds, name string) bool {
	return len(name) > len(ds) && strings.HasPrefix(name, ds) && name[len(ds)] == '/'
}
