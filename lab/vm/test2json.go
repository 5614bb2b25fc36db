package vm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Action is a test's outcome.
type Action string

// Outcomes of a test.
const (
	Pass Action = "pass"
	Fail Action = "fail"
	Skip Action = "skip"
)

// TestResult is the outcome of one test (or subtest) inside the VM.
type TestResult struct {
	Binary  string // GoTest.Name
	Test    string // e.g. TestNVMe/connect; empty for the binary as a whole
	Action  Action
	Elapsed time.Duration
	Output  string
}

// String is a one-line summary.
func (r TestResult) String() string {
	name := r.Test
	if name == "" {
		name = "(binary)"
	}
	return fmt.Sprintf("%s %s %s (%.2fs)", r.Binary, name, r.Action, r.Elapsed.Seconds())
}

// event is one line of test2json output.
type event struct {
	Action  string
	Test    string
	Elapsed float64
	Output  string
}

// testResults folds test2json events into results, in the order the tests
// started. A test that started but never ended (the binary died) fails. A
// binary whose exit code is not 0 without any failed test gets a result of
// its own with the output outside tests, so the failure is never lost.
func testResults(binary string, events []byte, exitCode int) []TestResult {
	type acc struct {
		res   TestResult
		ended bool
	}
	var order []string
	tests := map[string]*acc{}
	var pkgOut strings.Builder
	pkgAction := ""
	sc := bufio.NewScanner(bytes.NewReader(events))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			pkgOut.WriteString(sc.Text() + "\n")
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "output":
				pkgOut.WriteString(e.Output)
			case "pass", "fail", "skip":
				pkgAction = e.Action
			}
			continue
		}
		a := tests[e.Test]
		if a == nil {
			a = &acc{res: TestResult{Binary: binary, Test: e.Test}}
			tests[e.Test] = a
			order = append(order, e.Test)
		}
		switch e.Action {
		case "output":
			a.res.Output += e.Output
		case "pass", "fail", "skip":
			a.res.Action = Action(e.Action)
			a.res.Elapsed = time.Duration(e.Elapsed * float64(time.Second))
			a.ended = true
		}
	}
	var out []TestResult
	failed := false
	for _, name := range order {
		a := tests[name]
		switch {
		case !a.ended && strings.HasPrefix(name, "Benchmark") && exitCode == 0 && pkgAction != "fail":
			// test2json ends no benchmark with pass: its result line is
			// output, and a failed benchmark fails the binary.
			a.res.Action = Pass
		case !a.ended:
			a.res.Action = Fail
			a.res.Output += "(no result: the test binary exited while this test ran)\n"
		}
		if a.res.Action == Fail {
			failed = true
		}
		out = append(out, a.res)
	}
	if (exitCode != 0 || pkgAction == "fail") && !failed {
		why := fmt.Sprintf("the test binary exited with code %d", exitCode)
		if exitCode == -1 {
			why = "the test binary did not finish (no exit code)"
		}
		out = append(out, TestResult{Binary: binary, Action: Fail, Output: pkgOut.String() + why + "\n"})
	}
	return out
}
