package zfs

import (
	"io"
	"strings"
)

// Quote makes s one word for a POSIX shell, whatever it contains: words of
// safe characters stay as they are, anything else is single-quoted (inside
// single quotes nothing is special; a ' is closed, escaped and reopened:
// four bytes, quote backslash quote quote). Newlines, $( ),
// backticks, ; and spaces therefore reach the program as literal bytes.
func Quote(s string) string {
	if s != "" && isSafeWord(s) {
		return s
	}
	var b strings.Builder
	writeWord(&b, s)
	return b.String()
}

// Line joins argv into one shell command line, quoting every word. It
// writes the words into one buffer: every program the driver runs is
// built here (issue 16: a call's own allocations).
func Line(argv ...string) string {
	n := len(argv)
	for _, a := range argv {
		n += len(a) + 2
	}
	var b strings.Builder
	b.Grow(n)
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeWord(&b, a)
	}
	return b.String()
}

// writeWord writes s as Quote returns it.
func writeWord(b *strings.Builder, s string) {
	switch {
	case s == "":
		b.WriteString("''")
	case isSafeWord(s):
		b.WriteString(s)
	default:
		writeSingleQuoted(b, s)
	}
}

// writeSingleQuoted writes s in single quotes, each ' in it closed, escaped
// and reopened.
func writeSingleQuoted(b interface {
	io.StringWriter
	io.ByteWriter
}, s string) {
	_ = b.WriteByte('\'')
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			break
		}
		_, _ = b.WriteString(s[:i])
		_, _ = b.WriteString(`'\''`)
		s = s[i+1:]
	}
	_, _ = b.WriteString(s)
	_ = b.WriteByte('\'')
}

func isSafeWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeByte[s[i]] {
			return false
		}
	}
	return true
}

// safeByte marks the bytes a word may hold unquoted: a table lookup per
// byte, where the switch searched a string for each punctuation byte (every
// dataset name and property of every program passes here; issue 16).
var safeByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-_./:@%+,=") {
		t[c] = true
	}
	return t
}()
