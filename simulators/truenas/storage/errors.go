package storage

import (
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// zfsReason is what libzfs's error description says about err: zfs
// prints "cannot <verb> '<name>': <reason>", the middleware (through
// py-libzfs) only the reason.
func zfsReason(err error) string {
	msg := err.Error()
	first, rest, _ := strings.Cut(msg, "\n")
	if strings.HasPrefix(first, "cannot ") {
		if i := strings.Index(first, "': "); i >= 0 {
			first = first[i+3:]
		}
	}
	if rest != "" {
		return first + "\n" + rest
	}
	return first
}

// errnoOf picks the errno a model error is reported with.
func errnoOf(err error) int {
	switch zfsmodel.KindOf(err) {
	case zfsmodel.KindNotFound:
		return middleware.ENOENT
	case zfsmodel.KindExists:
		return middleware.EEXIST
	case zfsmodel.KindBusy:
		return middleware.EBUSY
	case zfsmodel.KindOutOfSpace:
		return middleware.ENOSPC
	case zfsmodel.KindHasChildren:
		return middleware.ENOTEMPTY
	case zfsmodel.KindInvalid, zfsmodel.KindBadType, zfsmodel.KindReadOnly:
		return middleware.EINVAL
	}
	return middleware.EFAULT
}

// callErr is a CallError "<prefix><reason>" for a model error.
func callErr(prefix string, err error) error {
	return &middleware.CallError{Errno: errnoOf(err), Message: prefix + zfsReason(err)}
}

// callErrFull keeps zfs's whole message (the middleware quotes zfs's
// stderr for commands it runs, e.g. zfs destroy).
func callErrFull(prefix string, err error) error {
	return &middleware.CallError{Errno: errnoOf(err), Message: prefix + err.Error()}
}
