package volumecontext

import (
	"errors"
	"fmt"
)

// Error is a volume_context key that is missing or holds a value the node
// cannot use. The node reports it as INVALID_ARGUMENT, prefixed with the
// volume id.
type Error struct {
	// Driver is the node_attach_driver the keys were read for ("" when
	// unknown).
	Driver string
	// Key is the missing or invalid key; Or names another key that would
	// have done instead ("portal" or "portals").
	Key, Or string
	// Value is the invalid value; it is "" when the key is missing.
	Value string
	// Missing is true when no (non-blank) value was given.
	Missing bool
	// Reason says what the value must be, or what the key is needed for.
	Reason string
}

func (e *Error) Error() string {
	if e.Missing {
		key := fmt.Sprintf("%q", e.Key)
		if e.Or != "" {
			key += fmt.Sprintf(" (or %q)", e.Or)
		}
		switch {
		case e.Driver == "":
			return fmt.Sprintf("volume_context key %s is missing: %s", key, e.Reason)
		case e.Reason == "":
			return fmt.Sprintf("volume_context key %s is missing: node_attach_driver %s needs it", key, e.Driver)
		default:
			return fmt.Sprintf("volume_context key %s is missing: node_attach_driver %s needs %s", key, e.Driver, e.Reason)
		}
	}
	return fmt.Sprintf("volume_context key %q has %q: %s", e.Key, e.Value, e.Reason)
}

// KeyOf returns the key an error from Decode names ("" when err is not an
// *Error).
func KeyOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Key
	}
	return ""
}

func missing(driver, key, or, need string) *Error {
	return &Error{Driver: driver, Key: key, Or: or, Missing: true, Reason: need}
}

func invalid(driver, key, value, reason string) *Error {
	return &Error{Driver: driver, Key: key, Value: value, Reason: reason}
}
