package zfs

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFramesAgainstBuiltPatterns checks indexMarkerLine against bytes.Index
// of the built pattern, and the frame readers against the rule they had
// when they built their patterns (begin line m+"\n", end lines
// "\n"+m+" "+status and "\n"+m+"\n"), on random streams made of marker
// pieces, newlines, spaces and digits (the status after the end line is
// read by endStatus in both).
func TestFramesAgainstBuiltPatterns(t *testing.T) {
	const m = "SWYab12"
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{m, "SWY", "ab", "\n", " ", "0", "7", "255", "x", m + "\n", "\n" + m + " ", "\n" + m + "\n"}
	for range 100000 {
		var b strings.Builder
		for range rng.IntN(7) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		buf := []byte(b.String())
		for _, after := range []byte{' ', '\n'} {
			if got, want := indexMarkerLine(buf, m, after), bytes.Index(buf, []byte("\n"+m+string(after))); got != want {
				t.Fatalf("indexMarkerLine(%q, %q) = %d, bytes.Index: %d", buf, after, got, want)
			}
		}
		out, code, begun, st := stdoutFrame(buf, m, false)
		wout, wcode, wbegun, wst := builtStdoutFrame(buf, m)
		if out != wout || code != wcode || begun != wbegun || st != wst {
			t.Fatalf("stdoutFrame(%q) = %q %d %v %v, with built patterns %q %d %v %v", buf, out, code, begun, st, wout, wcode, wbegun, wst)
		}
		errs, est := stderrFrame(buf, m, false)
		werrs, west := builtStderrFrame(buf, m)
		if errs != werrs || est != west {
			t.Fatalf("stderrFrame(%q) = %q %v, with built patterns %q %v", buf, errs, est, werrs, west)
		}
	}
}

func builtStdoutFrame(buf []byte, m string) (string, int, bool, frameState) {
	begin := m + "\n"
	if len(buf) < len(begin) {
		if !strings.HasPrefix(begin, string(buf)) {
			return "", 0, false, frameDesync
		}
		return "", 0, false, frameWaiting
	}
	if string(buf[:len(begin)]) != begin {
		return "", 0, false, frameDesync
	}
	body := buf[len(begin):]
	end := []byte("\n" + m + " ")
	i := bytes.Index(body, end)
	if i < 0 {
		return "", 0, true, frameWaiting
	}
	code, st := endStatus(body[i+len(end):])
	if st != frameDone {
		return "", 0, true, st
	}
	return string(body[:i]), code, true, frameDone
}

func builtStderrFrame(buf []byte, m string) (string, frameState) {
	end := []byte("\n" + m + "\n")
	i := bytes.Index(buf, end)
	if i < 0 {
		return "", frameWaiting
	}
	if i+len(end) != len(buf) {
		return "", frameDesync
	}
	return string(buf[:i]), frameDone
}
