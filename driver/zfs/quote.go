package zfs

import "strings"

// Quote makes s one word for a POSIX shell, whatever it contains: words of
// safe characters stay as they are, anything else is single-quoted (inside
// single quotes nothing is special; a ' is written as '\”). Newlines, $( ),
// backticks, ; and spaces therefore reach the program as literal bytes.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isSafeWord(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Line joins argv into one shell command line, quoting every word.
func Line(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
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
