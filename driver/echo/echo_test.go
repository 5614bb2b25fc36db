package echo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	if got := Quote("pvc-1"); got != `"pvc-1"` {
		t.Fatalf("short input: %s", got)
	}
	long := "v:nas/" + strings.Repeat("x", 10_000)
	got := Quote(long)
	if len(got) > MaxQuoted+40 || !strings.HasPrefix(got, `"v:nas/xxx`) || !strings.HasSuffix(got, "(10006 bytes)") {
		t.Fatalf("long input: %d bytes: %s", len(got), got)
	}
	// A cut never splits a character.
	multi := strings.Repeat("é", 200)
	if got := Quote(multi); !utf8.ValidString(got) || strings.Contains(got, `\x`) {
		t.Fatalf("cut inside a character: %s", got)
	}
}

func TestMessage(t *testing.T) {
	if got := Message("short"); got != "short" {
		t.Fatal(got)
	}
	got := Message(strings.Repeat("ü", 5000))
	if len(got) > MaxMessage+50 || !utf8.ValidString(got) || !strings.HasSuffix(got, "(message cut: 10000 bytes in all)") {
		t.Fatalf("%d bytes: ...%s", len(got), got[len(got)-60:])
	}
}
