package zfs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// The framing of a program sent to a long-lived shell session
// (ssh_shell.go). The session's shell is `sh -s` reading its SSH channel;
// each program P goes as one complete command:
//
//	printf '%s\n' M; sh -c 'P' "$1" </dev/null; printf '\n%s %d\n' M "$?"; printf '\n%s\n' M >&2
//
// M is a fresh 128-bit random marker per program, never reused and never
// part of P, so nothing P prints can end its output early or fake a status:
// it would have to guess M. P runs in its own `sh -c` as an exec runs it
// under the login shell: cd, variables, traps, `exit` and syntax errors
// stay in it, its stdin is at EOF as with exec, and its $0 is the login
// shell's (the session's $1), so `echo $0` reads as it does over exec.
//
// The begin line "M" on stdout shows the shell started the frame: a
// session that ends in order (an exit status arrives) before it was seen
// never ran P, so P may be sent again on a fresh session. The end lines
// carry one newline of the framing's own before the marker, dropped when
// reading, so the output is byte for byte what exec gives.

// shellHello is printed on both streams by the login shell before it
// starts `sh -s`: anything before it (login noise) is not a program's
// output, and a session that ends without it never started its shell.
const shellHello = "switchyard-shell-session"

// shellStartCommand is the exec that starts a session with id, run by the
// login shell; "$0" hands the login shell's name on to the programs (as
// their $0), and id, a second argument nothing reads, names the session in
// the host's process list for as long as it runs (ssh_orphans.go).
func shellStartCommand(id string) string {
	return `printf '%s\n' ` + shellHello + `; printf '%s\n' ` + shellHello + ` >&2; sh -s "$0" ` + id
}

// newSessionID is a shell session's id: "SWYS" and 32 hex digits.
func newSessionID() string { return "SWYS" + newMarker()[len("SWY"):] }

// newMarker returns a fresh marker: letters and digits only, so it needs
// no quoting.
func newMarker() string {
	var b [16]byte
	_, _ = rand.Read(b[:])            // never fails (crypto/rand)
	var m [len("SWY") + 2*len(b)]byte // one string made, not three
	copy(m[:], "SWY")
	hex.Encode(m[len("SWY"):], b[:])
	return string(m[:])
}

// frameProgram is the line that runs program under marker m.
func frameProgram(program, m string) []byte {
	var b bytes.Buffer
	b.Grow(len(program) + 4*len(m) + 96)
	b.WriteString(`printf '%s\n' `)
	b.WriteString(m)
	b.WriteString(`; sh -c `)
	writeSingleQuoted(&b, program) // quoted even when safe: the frame keeps one shape
	b.WriteString(` "$1" </dev/null; printf '\n%s %d\n' `)
	b.WriteString(m)
	b.WriteString(` "$?"; printf '\n%s\n' `)
	b.WriteString(m)
	b.WriteString(" >&2\n")
	return b.Bytes()
}

// frameState is what a stream has shown of one program so far.
type frameState int

const (
	frameWaiting frameState = iota // the end (and, on stdout, the begin) not yet seen
	frameDone                      // the end marker seen
	frameDesync                    // bytes where only the framing's may be
)

// stdoutFrame reads stdout so far: hello (a fresh session's first program
// only), the begin line, P's output, the end line with P's status. It
// returns P's output and status once complete, and whether the begin line
// was seen. Bytes before the begin line other than the hello, or after
// the end line, are a desync.
func stdoutFrame(buf []byte, m string, hello bool) (out string, code int, begun bool, st frameState) {
	if hello {
		rest, ok, bad := cutHello(buf)
		if bad {
			return "", 0, false, frameDesync
		}
		if !ok {
			return "", 0, false, frameWaiting
		}
		buf = rest
	}
	// The begin line is m and a newline; the end line a newline, m, a
	// space and the status. Neither pattern is built: these run on every
	// chunk a stream reader gets (issue 16: a call's own allocations).
	if len(buf) <= len(m) {
		if string(buf) != m[:len(buf)] {
			return "", 0, false, frameDesync
		}
		return "", 0, false, frameWaiting
	}
	if string(buf[:len(m)]) != m || buf[len(m)] != '\n' {
		return "", 0, false, frameDesync
	}
	body := buf[len(m)+1:]
	i := indexMarkerLine(body, m, ' ')
	if i < 0 {
		return "", 0, true, frameWaiting
	}
	code, st = endStatus(body[i+len(m)+2:])
	if st != frameDone {
		return "", 0, true, st
	}
	return string(body[:i]), code, true, frameDone
}

// endStatus reads what follows the end line's marker and space: the
// status (0-255) and a newline, the stream's last bytes.
func endStatus(tail []byte) (int, frameState) {
	nl := bytes.IndexByte(tail, '\n')
	if nl < 0 {
		if len(tail) > 3 {
			return 0, frameDesync
		}
		return 0, frameWaiting
	}
	n, err := strconv.Atoi(string(tail[:nl]))
	if err != nil || n < 0 || n > 255 || nl+1 != len(tail) {
		return 0, frameDesync
	}
	return n, frameDone
}

// stderrFrame reads stderr so far: hello (first program only), P's
// stderr, the end line. Bytes after the end line are a desync.
func stderrFrame(buf []byte, m string, hello bool) (errs string, st frameState) {
	if hello {
		rest, ok, bad := cutHello(buf)
		if bad {
			return "", frameDesync
		}
		if !ok {
			return "", frameWaiting
		}
		buf = rest
	}
	i := indexMarkerLine(buf, m, '\n')
	if i < 0 {
		return "", frameWaiting
	}
	if i+len(m)+2 != len(buf) {
		return "", frameDesync
	}
	return string(buf[:i]), frameDone
}

// indexMarkerLine is bytes.Index(buf, "\n"+m+string(after)) without
// building the pattern: every match starts at a newline, so it checks each
// newline in turn and finds the first match as bytes.Index would.
func indexMarkerLine(buf []byte, m string, after byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return -1
		}
		k := i + j
		if rest := buf[k+1:]; len(rest) > len(m) && string(rest[:len(m)]) == m && rest[len(m)] == after {
			return k
		}
		i = k + 1
	}
}

// cutHello drops everything up to and including the hello line: what a
// login shell prints before it (an rc file's noise) is no program's.
// bad: the stream is implausibly long without it.
func cutHello(buf []byte) (rest []byte, ok, bad bool) {
	h := []byte(shellHello + "\n")
	i := bytes.Index(buf, h)
	if i < 0 {
		return nil, false, len(buf) > maxLoginNoise
	}
	if i > 0 && buf[i-1] != '\n' {
		return nil, false, true
	}
	return buf[i+len(h):], true, false
}

// maxLoginNoise bounds what a login shell may print before the hello.
const maxLoginNoise = 64 << 10
