package zfsssh

import (
	"strings"
	"testing"
)

// xargs appends the words of its input to the command and runs it once;
// a command failing with 1-125 makes it exit 123, which is what lets
// `... | xargs test N -gt && zfs set ...` decide on the host.
func TestXargs(t *testing.T) {
	e := startEnv(t, nil)
	for _, c := range []struct {
		line   string
		code   int
		stdout string
		stderr string
	}{
		{"echo 5 | xargs test 7 -gt && echo grow", 0, "grow\n", ""},
		{"echo 9 | xargs test 7 -gt && echo grow", 123, "", ""},
		{"printf 'a\\nb  c\\n' | xargs echo x", 0, "x a b c\n", ""},
		{"echo | xargs -r false", 0, "", ""},
		{"echo 1 | xargs nosuchprogram", 127, "", "xargs: nosuchprogram: No such file or directory"},
		{"echo \"'\" | xargs echo", 1, "", "quotes and backslashes"},
		{"echo 1 | xargs -n 1 echo", 1, "", "option -n is not supported"},
	} {
		r := e.run(c.line)
		if r.code != c.code || r.stdout != c.stdout || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("%s = %+v, want exit %d, stdout %q, stderr with %q", c.line, r, c.code, c.stdout, c.stderr)
		}
	}
}
