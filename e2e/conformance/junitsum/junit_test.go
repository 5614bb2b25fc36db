package main

import (
	"bytes"
	"strings"
	"testing"
)

// A report in the shape Ginkgo v2 writes: a passed spec, a spec skipped by
// the framework with its reason, one left out by the focus (no reason), a
// failed spec and a passing suite node.
const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" failures="1">
  <testsuite name="Kubernetes e2e suite" tests="5">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1"></testcase>
    <testcase name="[It] External Storage [Driver: x] provisioning should provision storage with mount options" classname="Kubernetes e2e suite" status="passed" time="12"></testcase>
    <testcase name="[It] External Storage [Driver: x] volumeMode should fail to use a volume in a pod with mismatched mode" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped - Driver x doesn&#39;t support Block -- skipping"></skipped>
    </testcase>
    <testcase name="[It] External Storage [Driver: x] subPath should support existing directory" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] External Storage [Driver: x] snapshottable should restore" classname="Kubernetes e2e suite" status="failed" time="300">
      <failure message="
  timed out waiting for the condition
  more" type="failed"></failure>
    </testcase>
  </testsuite>
</testsuites>`

func TestReadSortsSpecs(t *testing.T) {
	s, err := read(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Passed) != 1 || !strings.Contains(s.Passed[0].Name, "mount options") {
		t.Errorf("passed = %+v, want the provisioning spec only (not the suite node)", s.Passed)
	}
	if len(s.Skipped) != 1 || s.Skipped[0].Reason != "Driver x doesn't support Block -- skipping" {
		t.Errorf("skipped = %+v, want the volumeMode spec with its reason", s.Skipped)
	}
	if s.NotSelected != 1 {
		t.Errorf("not selected = %d, want 1 (the subPath spec)", s.NotSelected)
	}
	if len(s.Failed) != 1 || s.Failed[0].Reason != "timed out waiting for the condition" {
		t.Errorf("failed = %+v, want the snapshottable spec with its first message line", s.Failed)
	}
	var out bytes.Buffer
	write(&out, s)
	if !strings.HasPrefix(out.String(), "passed 1, failed 1, skipped 1 (not selected: 1)\n") {
		t.Errorf("summary starts %q", out.String())
	}
	for _, want := range []string{"  PASS 12s [It] External Storage [Driver: x] provisioning", "  FAIL 300s [It] External Storage [Driver: x] snapshottable"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q (each passed and failed spec with its time):\n%s", want, out.String())
		}
	}
}

func TestReadRejectsOtherFiles(t *testing.T) {
	if _, err := read(strings.NewReader("Ran 3 of 7000 Specs")); err == nil {
		t.Error("read accepted a file that is not a JUnit report")
	}
}
