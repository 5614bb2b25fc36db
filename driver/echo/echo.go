// Package echo quotes request input back in error messages without echoing
// all of it: a handle, token or name can be kilobytes long (a client's bug
// or an attacker's probe), and an error, a log line or a Kubernetes event
// that repeats it in full helps nobody. The first bytes are enough to
// recognise the input; the length says how much was cut.
package echo

import (
	"fmt"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of an input Quote shows.
const MaxQuoted = 96

// Quote is s as %q would show it, cut to its first MaxQuoted bytes (on a
// character boundary) with the full length noted when longer.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return fmt.Sprintf("%q", s)
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// MaxMessage bounds a whole error message leaving the driver: a backstop
// for inputs echoed by code that does not use Quote (a backend's own error
// text, a storage system's answer).
const MaxMessage = 2048

// Message is msg cut to MaxMessage bytes (on a character boundary), with
// the cut noted.
func Message(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	cut := MaxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (message cut: %d bytes in all)", msg[:cut], len(msg))
}
