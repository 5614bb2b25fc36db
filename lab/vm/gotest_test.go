package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoTestScriptRuns runs the generated run.sh with sh on fake test
// binaries: each gets its arguments and environment verbatim, and its
// output and exit code land in the directory.
func TestGoTestScriptRuns(t *testing.T) {
	dir := t.TempDir()
	tests := []GoTest{
		{Name: "probe", Args: []string{"-test.run", "^TestA$|^TestB$", "it's quoted"}, Env: []string{"PROBE=1", "SPACED=a b"}},
		{Name: "odd name/with slash", Args: nil},
	}
	// A fake binary prints its arguments and two variables, and exits with
	// a code of its own.
	for i, code := range []int{0, 3} {
		fake := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do echo \"arg=$a\"; done\necho \"PROBE=$PROBE SPACED=$SPACED\"\nexit %d\n", code)
		if err := os.WriteFile(filepath.Join(dir, binName(i, tests[i])), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := goTestScript(dir, tests)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"LAB: go test 1/2 probe", "LAB: go test 1 exit code 0", "LAB: go test 2 exit code 3"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("run.sh output lacks %q:\n%s", want, out)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("0.out"), "arg=-test.v=test2json\narg=-test.run\narg=^TestA$|^TestB$\narg=it's quoted\nPROBE=1 SPACED=a b\n"; got != want {
		t.Errorf("0.out = %q, want %q", got, want)
	}
	if got, want := read("1.out"), "arg=-test.v=test2json\nPROBE= SPACED=\n"; got != want {
		t.Errorf("1.out = %q, want %q", got, want)
	}
	if read("0.rc") != "0\n" || read("1.rc") != "3\n" {
		t.Errorf("exit codes %q %q, want 0 and 3", read("0.rc"), read("1.rc"))
	}
}

func TestGoTestScriptRejectsBadEnv(t *testing.T) {
	for _, env := range []string{"NOVALUE", "=x", "1X=y", "A-B=c", "A B=c"} {
		if _, err := goTestScript("/lab/gotest", []GoTest{{Name: "t", Env: []string{env}}}); err == nil || !strings.Contains(err.Error(), "KEY=value") {
			t.Errorf("env %q: err = %v, want a KEY=value error", env, err)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", "it's", `$HOME`, "`x`", "a\nb", "*", `\`} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("shellQuote(%q) reads back as %q", s, out)
		}
	}
}
