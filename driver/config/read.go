package config

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxFileSize is the largest config file switchyard reads: 1 MiB, the most a
// Kubernetes Secret can hold, so no real connection file is refused.
const MaxFileSize = 1 << 20

// readFile reads a config file that may have been put there by anyone who
// can write the folder. It is opened without blocking (a named pipe would
// otherwise hang the caller for good, holding its locks) and must be a
// regular file of at most MaxFileSize bytes (a link to /dev/zero would
// otherwise eat memory without end). Symbolic links are followed: Secret
// volumes are made of them.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s): a config file must be a plain file", fileKind(fi.Mode()))
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%d bytes, more than the %d-byte limit (1 MiB, the most a Kubernetes Secret holds)", fi.Size(), MaxFileSize)
	}
	// The size can change between the stat and the read: bound the read too.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("more than the %d-byte limit (1 MiB, the most a Kubernetes Secret holds)", MaxFileSize)
	}
	return data, nil
}

// fileKind names a non-regular file type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}
