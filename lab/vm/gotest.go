package vm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// GoTest is one static test binary to run inside the VM.
type GoTest struct {
	// Name labels its results; default the binary's file name.
	Name string
	// Binary is the host path of a test binary built by BuildTestBinary.
	Binary string
	// Args follow -test.v=test2json (e.g. -test.run, -test.timeout).
	Args []string
	// Env entries (KEY=value) are added to the binary's environment.
	Env []string
}

// BuildTestBinary compiles the tests of package pkg (an import path, or a
// relative one like ./lab/vm/internal/vmprobe from the module) into a static
// binary at out, which runs inside the VM without its libc.
func BuildTestBinary(ctx context.Context, pkg, out string) error {
	cmd := exec.CommandContext(ctx, goTool(), "test", "-c", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go test -c %s: %v\n%s", pkg, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if _, err := os.Stat(out); err != nil {
		// go test -c writes nothing for a package without tests.
		return fmt.Errorf("go test -c %s wrote no binary (does the package have tests?)", pkg)
	}
	return nil
}

// BuildBinary compiles the command pkg (an import path) into a static
// binary at out that runs inside the VM (e.g. switchyard-lab, to run the
// simulators there with --kernel).
func BuildBinary(ctx context.Context, pkg, out string) error {
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// goTool is the go command: PATH's (go test puts its own first), else the
// toolchain that built this binary.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	// The toolchain that built this binary: go test binaries run on the
	// machine that built them, where GOROOT() is still meaningful.
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // SA1019, see above
}

// RunGoTests boots img once and runs the test binaries one after another
// with -test.v=test2json, then converts their output on the host with
// `go tool test2json`: one TestResult per test and subtest. A binary that
// fails without a failing test (a panic, a bad flag, the VM stopping before
// it ran) gets a result with an empty Test that says why. o.Share, if set,
// receives the binaries and their output (kept for inspection); otherwise
// a temporary directory is used.
func RunGoTests(ctx context.Context, img *Image, o RunOptions, tests ...GoTest) ([]TestResult, *Result, error) {
	if len(tests) == 0 {
		return nil, nil, fmt.Errorf("vm: RunGoTests: no tests")
	}
	if o.Share == "" {
		tmp, err := os.MkdirTemp("", "switchyard-vm-gotest-")
		if err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(tmp)
		o.Share = tmp
	}
	dir := filepath.Join(o.Share, "gotest")
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	for i := range tests {
		if tests[i].Name == "" {
			tests[i].Name = filepath.Base(tests[i].Binary)
		}
		if err := copyFile(tests[i].Binary, filepath.Join(dir, binName(i, tests[i])), 0o755); err != nil {
			return nil, nil, fmt.Errorf("vm: copying test binary into the share: %w", err)
		}
	}
	script, err := goTestScript("/lab/gotest", tests)
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Share, "run.sh"), []byte(script), 0o755); err != nil {
		return nil, nil, err
	}
	res, runErr := img.Run(ctx, o)
	var results []TestResult
	for i, t := range tests {
		r, err := collectGoTest(ctx, dir, i, t)
		if err != nil {
			return results, res, err
		}
		results = append(results, r...)
	}
	return results, res, runErr
}

// binName is a test binary's file name in the share.
func binName(i int, t GoTest) string {
	return fmt.Sprintf("%d-%s", i, safeName.ReplaceAllString(t.Name, "_"))
}

var (
	safeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)
	envKey   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// goTestScript is the run.sh that runs the binaries in order, each with its
// output and exit code in dir (the share's gotest directory as the guest
// sees it).
func goTestScript(dir string, tests []GoTest) (string, error) {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# Written by lab/vm RunGoTests: runs each test binary, keeps its output and exit code.\n")
	fmt.Fprintf(&b, "cd %s || exit 1\n", shellQuote(dir))
	for i, t := range tests {
		words := []string{"env"}
		for _, e := range t.Env {
			k, _, ok := strings.Cut(e, "=")
			if !ok || !envKey.MatchString(k) {
				return "", fmt.Errorf("vm: test %s: environment entry %q is not KEY=value", t.Name, e)
			}
			words = append(words, shellQuote(e))
		}
		words = append(words, "./"+shellQuote(binName(i, t)), "-test.v=test2json")
		for _, a := range t.Args {
			words = append(words, shellQuote(a))
		}
		fmt.Fprintf(&b, "echo %s\n", shellQuote(fmt.Sprintf("LAB: go test %d/%d %s", i+1, len(tests), t.Name)))
		fmt.Fprintf(&b, "%s >%d.out 2>&1 </dev/null\n", strings.Join(words, " "), i)
		fmt.Fprintf(&b, "rc=$?; echo $rc >%d.rc; echo \"LAB: go test %d exit code $rc\"\n", i, i+1)
	}
	// Only the share needs its data on the host (the disks are
	// snapshot=on); a plain sync would also wait on a network mount a
	// failed test left behind, whose server is gone, for ever.
	fmt.Fprintf(&b, "sync -f %s\nexit 0\n", shellQuote(dir))
	return b.String(), nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// collectGoTest turns the i-th binary's output and exit code into results.
func collectGoTest(ctx context.Context, dir string, i int, t GoTest) ([]TestResult, error) {
	out, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.out", i)))
	if err != nil {
		return []TestResult{{Binary: t.Name, Action: Fail, Output: "the test binary did not run: the VM stopped before run.sh reached it"}}, nil //nolint:nilerr // a missing output is a failed test, not an error of the run
	}
	rc := -1
	if b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.rc", i))); err == nil {
		if _, err := fmt.Sscan(string(b), &rc); err != nil {
			rc = -1 // a torn write: treated as "did not finish"
		}
	}
	events, err := test2json(ctx, t.Name, out)
	if err != nil {
		return nil, err
	}
	return testResults(t.Name, events, rc), nil
}

// test2json converts -test.v=test2json output into JSON events with the
// go tool.
func test2json(ctx context.Context, name string, out []byte) ([]byte, error) {
	// -t: without it test2json leaves out the elapsed times.
	cmd := exec.CommandContext(ctx, goTool(), "tool", "test2json", "-t", "-p", name)
	cmd.Stdin = bytes.NewReader(out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go tool test2json: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}
