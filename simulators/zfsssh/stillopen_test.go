package zfsssh

import (
	"math/rand"
	"strings"
	"testing"
)

// A reader that skips parsing while a line cannot close the open quote
// finds every command complete at the same line as one that parses every
// line (random texts of quotes, escapes, dollars, backquotes, operators
// over many lines).
func TestStillOpenMatchesFullParse(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	alpha := []string{"a", " ", "\n", "\n", "'", "'", "\"", "\\", "$", "$x", "${", "`", "&&", "|", ";", ")", "(", "#", "zfs get", "\\\n", `'\''`, `'\'\x'`, `\'`}
	ends := func(lines []string, skip bool) []int {
		var out []int
		var pending strings.Builder
		var open byte
		for i, line := range lines {
			pending.WriteString(line)
			if skip && open != 0 && stillOpen(open, line) {
				// what the skipped parse would have said
				if _, more, q := parseScriptQuote(pending.String()); !more || q != open {
					t.Fatalf("%q: still open at %q by stillOpen, but the parse says more %v, open %q", pending.String(), line, more, q)
				}
				continue
			}
			_, more, q := parseScriptQuote(pending.String())
			if more {
				open = q
				continue
			}
			open = 0
			pending.Reset()
			out = append(out, i)
		}
		return out
	}
	for range 50000 {
		var b strings.Builder
		for range r.Intn(30) {
			b.WriteString(alpha[r.Intn(len(alpha))])
		}
		lines := strings.SplitAfter(b.String(), "\n")
		full, skipped := ends(lines, false), ends(lines, true)
		if len(full) != len(skipped) {
			t.Fatalf("%q: commands end at lines %v parsing every line, %v skipping", b.String(), full, skipped)
		}
		for i := range full {
			if full[i] != skipped[i] {
				t.Fatalf("%q: commands end at lines %v parsing every line, %v skipping", b.String(), full, skipped)
			}
		}
	}
}
