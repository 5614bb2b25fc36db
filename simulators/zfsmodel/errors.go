package zfsmodel

import (
	"errors"
	"fmt"
)

// Kind classifies an *Error so callers can react without parsing its text.
type Kind int

// Error kinds. Each maps to the libzfs error class real zfs reports.
const (
	KindInvalid      Kind = iota + 1 // bad name, property, value or usage
	KindNotFound                     // no such dataset, snapshot or pool
	KindExists                       // dataset already exists
	KindBusy                         // dataset is busy
	KindHasChildren                  // destroy without -r
	KindHasClones                    // destroy of an origin without -R
	KindOutOfSpace                   // out of space / quota / reservation
	KindReadOnly                     // read-only property
	KindBadType                      // operation not applicable to this type
	KindBadStream                    // zfs receive of something that is not a stream
	KindNotSupported                 // valid but not modelled
	KindIO                           // the backing files failed
	KindCrypto                       // an encryption failure (EZFS_CRYPTOFAILED): a bad or missing key
)

var kindNames = map[Kind]string{
	KindInvalid: "invalid", KindNotFound: "not found", KindExists: "exists",
	KindBusy: "busy", KindHasChildren: "has children", KindHasClones: "has clones",
	KindOutOfSpace: "out of space", KindReadOnly: "read-only", KindBadType: "bad type",
	KindBadStream: "bad stream", KindNotSupported: "not supported", KindIO: "I/O error",
	KindCrypto: "encryption failure",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is an error of the model. Its message is the exact text zfs prints
// (possibly several lines, without the final newline).
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func newErr(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the Kind of err if it is (or wraps) an *Error, else 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// errNoDataset is zfs_open's "dataset does not exist".
func errNoDataset(name string) *Error {
	return newErr(KindNotFound, "cannot open '%s': dataset does not exist", name)
}

// errBadType is zfs_open's answer when the dataset exists with another type.
func errBadType(name string) *Error {
	return newErr(KindBadType, "cannot open '%s': operation not applicable to datasets of this type", name)
}

func errIO(action string, err error) *Error {
	return newErr(KindIO, "%s: I/O error (%v)", action, err)
}
