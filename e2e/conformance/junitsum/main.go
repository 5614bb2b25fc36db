// Command junitsum summarises a Ginkgo JUnit report of e2e.test for
// e2e/conformance/run.sh: the counts of passed, failed and skipped specs,
// then every passed spec with its time, every failed spec with its time and
// the first line of its failure, and every skipped spec with its reason (the framework's e2eskipper message, e.g. a
// capability the testdriver does not declare). Specs that the focus and
// skip expressions left out are counted, not listed: they are "skipped"
// with no reason in the report.
//
// usage: junitsum junit.xml
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: junitsum junit.xml")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "junitsum:", err)
		os.Exit(1)
	}
}

// run summarises the report at path onto w.
func run(path string, w io.Writer) error {
	// The report e2e.test wrote for run.sh, which names it.
	f, err := os.Open(path) //nolint:gosec // a path from the caller, read only
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	write(w, s)
	return nil
}

// write prints the summary, one spec a line, indented under the counts.
func write(w io.Writer, s summary) {
	fmt.Fprintf(w, "passed %d, failed %d, skipped %d (not selected: %d)\n", len(s.Passed), len(s.Failed), len(s.Skipped), s.NotSelected)
	for _, c := range s.Passed {
		fmt.Fprintf(w, "  PASS %.0fs %s\n", c.Seconds, c.Name)
	}
	for _, c := range s.Failed {
		fmt.Fprintf(w, "  FAIL %.0fs %s\n       %s\n", c.Seconds, c.Name, c.Reason)
	}
	for _, c := range s.Skipped {
		fmt.Fprintf(w, "  SKIP %s\n       %s\n", c.Name, c.Reason)
	}
}
