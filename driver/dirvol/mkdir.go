package dirvol

import (
	"os"
	"path/filepath"
)

// mkdirAllDurable makes dir and its missing parents, then syncs the parent
// of each directory it made: a new name is durable only once its directory
// is synced (POSIX), and the metadata and volume directories a first create
// makes must survive a power cut as the files in them do. Later creates find
// dir there and pay one stat.
func mkdirAllDurable(dir string) error {
	made := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range made {
		if err := syncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// missingDirs lists dir and those of its parents that do not exist yet,
// deepest first: the directories MkdirAll(dir) would make.
func missingDirs(dir string) []string {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	return missing
}
