package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The parts of Ginkgo's JUnit report (reporters/junit_report.go) read here.
type junitReport struct {
	Suites []struct {
		Cases []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type junitCase struct {
	Name    string  `xml:"name,attr"`
	Status  string  `xml:"status,attr"`
	Time    float64 `xml:"time,attr"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	Failure *struct {
		Message string `xml:"message,attr"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
}

// spec is one listed spec; Seconds is Ginkgo's run time for it (the
// per-spec times docs/testing.md sizes CI's subsets with).
type spec struct {
	Name, Reason string
	Seconds      float64
}

type summary struct {
	Passed, Failed, Skipped []spec
	NotSelected             int
}

// read sorts the report's specs. Ginkgo's setup and teardown nodes
// (SynchronizedBeforeSuite and the like) are cases too: they count as specs
// only when they fail, since a failing one fails the run.
func read(r io.Reader) (summary, error) {
	var rep junitReport
	// A local file of e2e.test's; encoding/xml neither expands entities
	// nor fetches anything.
	if err := xml.NewDecoder(r).Decode(&rep); err != nil { //nolint:gosec // see above
		return summary{}, fmt.Errorf("not a JUnit report: %w", err)
	}
	var s summary
	for _, suite := range rep.Suites {
		for _, c := range suite.Cases {
			it := strings.HasPrefix(c.Name, "[It]")
			switch {
			case c.Failure != nil || c.Error != nil || c.Status == "failed" || c.Status == "panicked" || c.Status == "timedout" || c.Status == "interrupted" || c.Status == "aborted":
				msg := ""
				if c.Failure != nil {
					msg = c.Failure.Message
				} else if c.Error != nil {
					msg = c.Error.Message
				}
				s.Failed = append(s.Failed, spec{c.Name, firstLine(msg, c.Status), c.Time})
			case c.Status == "skipped" || c.Skipped != nil:
				reason := ""
				if c.Skipped != nil {
					reason = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Skipped.Message, "skipped"), " - "))
				}
				if reason == "" {
					if it {
						s.NotSelected++
					}
					continue
				}
				s.Skipped = append(s.Skipped, spec{c.Name, firstLine(reason, "skipped"), c.Time})
			case it:
				s.Passed = append(s.Passed, spec{c.Name, "", c.Time})
			}
		}
	}
	return s, nil
}

// firstLine is the first non-empty line of msg, else def.
func firstLine(msg, def string) string {
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return def
}
