package vm

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGoTestOutputToResults feeds captured -test.v=test2json output
// through the real `go tool test2json` and folds it into results.
func TestGoTestOutputToResults(t *testing.T) {
	type want struct {
		action Action
		output string
	}
	tests := []struct {
		file     string
		exitCode int
		want     map[string]want // by test name; "" is the binary
	}{
		{
			// vmprobe on the host with SWITCHYARD_VM_PROBE_OUTCOMES=1
			file: "testdata/outcomes.out", exitCode: 1,
			want: map[string]want{
				"TestConfigfsMounted": {Skip, "runs only inside the lab VM"},
				"TestOutcomes":        {Fail, ""},
				"TestOutcomes/pass":   {Pass, "this one passes"},
				"TestOutcomes/fail":   {Fail, "deliberate failure"},
				"TestOutcomes/skip":   {Skip, "deliberate skip"},
				"TestServeOnce":       {Skip, "SWITCHYARD_VM_PROBE_SERVE"},
			},
		},
		{
			// a binary that panicked in its second test
			file: "testdata/panic.out", exitCode: 2,
			want: map[string]want{
				"TestA": {Pass, "fine"},
				"TestB": {Fail, "panic: boom"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			events, err := test2json(context.Background(), "probe", out)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]TestResult{}
			for _, r := range testResults("probe", events, tt.exitCode) {
				if r.Binary != "probe" {
					t.Errorf("%s: Binary = %q", r.Test, r.Binary)
				}
				got[r.Test] = r
			}
			for name, w := range tt.want {
				r, ok := got[name]
				if !ok {
					t.Errorf("no result for %q", name)
					continue
				}
				if name == "TestA" && r.Elapsed != 250*time.Millisecond {
					t.Errorf("TestA took %s, want the 0.25s its report line says", r.Elapsed)
				}
				if r.Action != w.action || !strings.Contains(r.Output, w.output) {
					t.Errorf("%s: %s with output %q; want %s containing %q", name, r.Action, r.Output, w.action, w.output)
				}
			}
			if _, ok := got[""]; ok {
				t.Errorf("a binary-level result although a test failed: %+v", got[""])
			}
		})
	}
}

func TestResultsFromEvents(t *testing.T) {
	ev := func(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }
	tests := []struct {
		name     string
		events   []byte
		exitCode int
		want     []TestResult
	}{
		{
			name: "pass with elapsed time and subtests in start order",
			events: ev(`{"Action":"run","Test":"TestX"}`, `{"Action":"output","Test":"TestX","Output":"hello\n"}`,
				`{"Action":"run","Test":"TestX/a"}`, `{"Action":"pass","Test":"TestX/a","Elapsed":0.5}`,
				`{"Action":"pass","Test":"TestX","Elapsed":1.25}`, `{"Action":"pass","Elapsed":1.3}`),
			want: []TestResult{
				{Binary: "b", Test: "TestX", Action: Pass, Elapsed: 1250 * time.Millisecond, Output: "hello\n"},
				{Binary: "b", Test: "TestX/a", Action: Pass, Elapsed: 500 * time.Millisecond},
			},
		},
		{
			name:     "a failing exit code without a failed test fails the binary",
			events:   ev(`{"Action":"output","Output":"flag provided but not defined: -x\n"}`, `{"Action":"fail"}`),
			exitCode: 2,
			want: []TestResult{{Binary: "b", Action: Fail,
				Output: "flag provided but not defined: -x\nthe test binary exited with code 2\n"}},
		},
		{
			name:     "no exit code: the binary did not finish",
			events:   ev(`{"Action":"run","Test":"TestY"}`, `{"Action":"pass","Test":"TestY"}`),
			exitCode: -1,
			want: []TestResult{
				{Binary: "b", Test: "TestY", Action: Pass},
				{Binary: "b", Action: Fail, Output: "the test binary did not finish (no exit code)\n"},
			},
		},
		{
			name:   "a test without an end fails",
			events: ev(`{"Action":"run","Test":"TestZ"}`, `{"Action":"output","Test":"TestZ","Output":"working\n"}`, `not json`),
			want: []TestResult{
				{Binary: "b", Test: "TestZ", Action: Fail, Output: "working\n(no result: the test binary exited while this test ran)\n"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testResults("b", tt.events, tt.exitCode)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d results %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("result %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
