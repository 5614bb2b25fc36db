package zfs

import (
	"errors"
	"strconv"
	"strings"
)

// Error is a zfs (or other host) command that ran and failed. Its message
// is the command's own stderr, which the classifiers below read the way
// democratic-csi does: by the text real zfs prints.
type Error struct {
	// Command is the program and subcommand ("zfs create"), never values.
	Command string
	Stderr  string
	Code    int
	// Kind classifies errors whose text is not zfs's (a storage API's);
	// zero for command-line errors, which are classified by their text.
	Kind ErrorKind
}

// ErrorKind is what went wrong, for errors that do not carry zfs's texts.
type ErrorKind int

// Error kinds (see the Is* functions).
const (
	KindOther ErrorKind = iota
	KindNotExist
	KindExists
	KindBusy
	KindDependentClones
	KindOutOfSpace
)

func kindIs(err error, k ErrorKind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "exited with status " + strconv.Itoa(e.Code) + " and no message"
	}
	return e.Command + ": " + msg
}

func stderrHas(err error, texts ...string) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	for _, t := range texts {
		if strings.Contains(e.Stderr, t) {
			return true
		}
	}
	return false
}

// IsNotExist: the dataset, snapshot or pool does not exist.
func IsNotExist(err error) bool {
	return kindIs(err, KindNotExist) || stderrHas(err, "dataset does not exist", "no such pool", "could not find any snapshots to destroy")
}

// IsExists: the dataset or snapshot already exists (also a receive whose
// destination exists).
func IsExists(err error) bool {
	if kindIs(err, KindExists) || stderrHas(err, "dataset already exists") {
		return true
	}
	var e *Error
	return errors.As(err, &e) && strings.Contains(e.Stderr, "destination") && strings.Contains(e.Stderr, "exists")
}

// IsBusy: the dataset is in use (mounted and busy, or a zvol held open);
// democratic-csi retries destroys on these.
func IsBusy(err error) bool {
	return kindIs(err, KindBusy) || stderrHas(err, "dataset is busy", "target is busy", "pool or dataset is busy")
}

// HasDependentClones: a destroy was refused because clones depend on a
// snapshot of the dataset.
func HasDependentClones(err error) bool {
	return kindIs(err, KindDependentClones) || stderrHas(err, "has dependent clones")
}

// IsOutOfSpace: the pool (or a quota) has no room for the request.
func IsOutOfSpace(err error) bool {
	return kindIs(err, KindOutOfSpace) || stderrHas(err, "out of space", "size is greater than available space", "exceeds quota", "quota exceeded")
}
