package zfs

import (
	"context"
	"strings"
	"testing"
)

// A program's reads report a missing dataset with "cannot open '<name>'";
// what is left is the changing command's own message.
func TestStderrOf(t *testing.T) {
	stderr := "cannot create 'tank/v/a': out of space\ncannot open 'tank/v/a': dataset does not exist\n"
	if got := StderrOf(stderr, "tank/v/a"); got != "cannot create 'tank/v/a': out of space" {
		t.Fatalf("got %q", got)
	}
	// Another dataset's "cannot open" is kept: it is not the read's.
	if got := StderrOf("cannot open 'tank/v/b': dataset does not exist", "tank/v/a"); got == "" {
		t.Fatal("dropped a message about another dataset")
	}
}

type recordExec struct{ lines []string }

func (r *recordExec) Run(_ context.Context, line string, _ RunOptions) (Output, error) {
	r.lines = append(r.lines, line)
	return Output{}, nil
}
func (*recordExec) Close() error { return nil }

// RunProgram sends its commands as one line, joined with "; ", each word
// quoted; a program over MaxProgram is never sent.
func TestRunProgram(t *testing.T) {
	r := &recordExec{}
	c := &CLI{Exec: r, Sudo: true}
	if _, err := c.RunProgram(context.Background(), c.ZFSLine("get", "-Hp", "a b"), c.ZFSLine("destroy", "x;y")); err != nil {
		t.Fatal(err)
	}
	want := "/usr/bin/sudo /sbin/zfs get -Hp 'a b'; /usr/bin/sudo /sbin/zfs destroy 'x;y'"
	if len(r.lines) != 1 || r.lines[0] != want {
		t.Fatalf("sent %q, want %q", r.lines, want)
	}
	if _, err := c.RunProgram(context.Background(), strings.Repeat("x", MaxProgram+1)); err != ErrProgramTooLong {
		t.Fatalf("long program: %v", err)
	}
	if len(r.lines) != 1 {
		t.Fatal("a program over the limit was sent")
	}
}
