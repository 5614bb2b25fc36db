package zfsssh

import (
	"strings"
	"testing"
)

// sq is a POSIX sh single-quoting of s (written here: simulators do not
// import the driver's quoting).
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// literalWords parses src and returns the words of its one simple command
// when every part is literal text.
func literalWords(t *testing.T, src string) []string {
	p := &parser{toks: lex(src)}
	list, err := p.nextList()
	if err != nil || len(list) != 1 || len(list[0].pipes) != 1 || len(list[0].pipes[0].cmds) != 1 {
		t.Fatalf("%q: parsed as %v, %v", src, list, err)
	}
	var out []string
	for _, w := range list[0].pipes[0].cmds[0].words {
		var b strings.Builder
		for _, part := range w.parts {
			if part.param != "" {
				t.Fatalf("%q: a single-quoted word expands $%s", src, part.param)
			}
			b.WriteString(part.text)
		}
		out = append(out, b.String())
	}
	return out
}

// FuzzShell: any script lexes and parses to lists or a syntax error,
// never a panic or a loop; and words single-quoted as drivers quote them
// reach the command exactly, whatever they hold.
func FuzzShell(f *testing.F) {
	for _, s := range []string{
		"zfs create -p 'tank/a b'", "sh -c 'echo '\\''x'\\'' | targetcli'", "a && b || c; d | e > /dev/null 2>&1",
		"$(reboot)", "`id`", "cat <<EOF\nx\nEOF", "x=1 y=\"$x\" cmd \"${x}\"", "if true; then x; fi", "'unterminated", "a\\\nb",
	} {
		f.Add(s, "tank/v@snap", "it's")
	}
	f.Fuzz(func(t *testing.T, src, a, b string) {
		p := &parser{toks: lex(src)}
		for i := 0; i <= len(src)+1; i++ {
			list, err := p.nextList()
			if err != nil || list == nil {
				break
			}
			if i == len(src)+1 {
				t.Fatalf("%q: parser does not reach the end", src)
			}
		}
		if strings.ContainsRune(a+b, 0) {
			return
		}
		got := literalWords(t, "zfs "+sq(a)+" "+sq(b))
		if len(got) != 3 || got[1] != a || got[2] != b {
			t.Fatalf("quoted %q %q arrive as %q", a, b, got)
		}
	})
}
