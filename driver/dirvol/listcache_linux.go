package dirvol

import (
	"os"
	"syscall"
)

// statDir is the key of the directory at path.
func statDir(path string) (dirKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return dirKey{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirKey{}, errNoStat
	}
	return dirKey{
		dev: st.Dev, ino: st.Ino,
		nlink: uint64(st.Nlink), //nolint:unconvert // uint32 on some architectures
		size:  st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, nil
}
