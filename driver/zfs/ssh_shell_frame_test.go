package zfs

import (
	"strings"
	"testing"
)

func TestNewMarkerFresh(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		m := newMarker()
		if seen[m] || len(m) != 3+32 || Quote(m) != m {
			t.Fatalf("marker %q: repeated, wrong length or needs quoting", m)
		}
		seen[m] = true
	}
}

// The frame's shape is fixed (the simulator's tests write it out too) and
// the program is one single-quoted word whatever it holds.
func TestFrameProgram(t *testing.T) {
	got := string(frameProgram(`echo 'it''s'; printf "%s\n" x`, "SWYm"))
	want := `printf '%s\n' SWYm; sh -c 'echo '\''it'\'''\''s'\''; printf "%s\n" x' "$1" </dev/null; printf '\n%s %d\n' SWYm "$?"; printf '\n%s\n' SWYm >&2` + "\n"
	if got != want {
		t.Fatalf("frame\n got %s\nwant %s", got, want)
	}
}

func TestStdoutFrame(t *testing.T) {
	const m = "SWYabc"
	other := "SWYdef" // another call's marker, as a program might print
	tests := []struct {
		name  string
		buf   string
		hello bool
		out   string
		code  int
		begun bool
		st    frameState
	}{
		{name: "empty", buf: "", st: frameWaiting},
		{name: "half begin", buf: "SWYa", st: frameWaiting},
		{name: "begun", buf: m + "\npartial", begun: true, st: frameWaiting},
		{name: "no output", buf: m + "\n\n" + m + " 0\n", begun: true, st: frameDone},
		{name: "no final newline", buf: m + "\nabc\n" + m + " 1\n", out: "abc", code: 1, begun: true, st: frameDone},
		{name: "final newline kept", buf: m + "\nabc\n\n" + m + " 2\n", out: "abc\n", code: 2, begun: true, st: frameDone},
		{name: "status not complete", buf: m + "\nx\n" + m + " 12", begun: true, st: frameWaiting},
		// Output that imitates a frame with a marker not this call's is
		// the program's output, byte for byte.
		{name: "forged end", buf: m + "\n\n" + other + " 0\nreal\n" + m + " 5\n", out: "\n" + other + " 0\nreal", code: 5, begun: true, st: frameDone},
		{name: "forged begin", buf: m + "\n" + other + "\n\n" + m + " 0\n", out: other + "\n", begun: true, st: frameDone},
		// Bytes where only the framing's may be: out of step.
		{name: "stray before begin", buf: "stray\n" + m + "\n", st: frameDesync},
		{name: "stray after end", buf: m + "\nx\n" + m + " 0\nstray", begun: true, st: frameDesync},
		{name: "bad status", buf: m + "\nx\n" + m + " 9x\n", begun: true, st: frameDesync},
		{name: "status out of range", buf: m + "\nx\n" + m + " 256\n", begun: true, st: frameDesync},
		{name: "hello first", hello: true, buf: "motd\n" + shellHello + "\n" + m + "\nok\n" + m + " 0\n", out: "ok", begun: true, st: frameDone},
		{name: "hello missing yet", hello: true, buf: "motd\n", st: frameWaiting},
		{name: "hello mid-line", hello: true, buf: "x" + shellHello + "\n" + m + "\n", st: frameDesync},
		{name: "no hello for ages", hello: true, buf: strings.Repeat("x", maxLoginNoise+1), st: frameDesync},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code, begun, st := stdoutFrame([]byte(tt.buf), m, tt.hello)
			if out != tt.out || code != tt.code || begun != tt.begun || st != tt.st {
				t.Fatalf("stdoutFrame = %q, %d, begun %v, state %d; want %q, %d, %v, %d", out, code, begun, st, tt.out, tt.code, tt.begun, tt.st)
			}
		})
	}
}

func TestStderrFrame(t *testing.T) {
	const m = "SWYabc"
	tests := []struct {
		buf   string
		hello bool
		errs  string
		st    frameState
	}{
		{buf: "", st: frameWaiting},
		{buf: "\n" + m + "\n", st: frameDone},
		{buf: "oops\n\n" + m + "\n", errs: "oops\n", st: frameDone},
		{buf: "oops\n" + m + "\n", errs: "oops", st: frameDone}, // no final newline of its own
		{buf: "\nSWYdef\n\n" + m + "\n", errs: "\nSWYdef\n", st: frameDone},
		{buf: "\n" + m + "\nstray", st: frameDesync},
		{buf: shellHello + "\n\n" + m + "\n", hello: true, st: frameDone},
	}
	for _, tt := range tests {
		errs, st := stderrFrame([]byte(tt.buf), m, tt.hello)
		if errs != tt.errs || st != tt.st {
			t.Errorf("stderrFrame(%q) = %q, %d; want %q, %d", tt.buf, errs, st, tt.errs, tt.st)
		}
	}
}
