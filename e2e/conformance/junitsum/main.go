// Command junitsum summarises a Ginkgo JUnit report of e2e.test for
// e2e/conformance/run.sh: the counts of passed, failed and skipped specs,
// then every failed spec with the first line of its failure and every
// skipped spec with its reason (the framework's e2eskipper message, e.g. a
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
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "junitsum:", err)
		os.Exit(1)
	}
	defer f.Close()
	s, err := read(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "junitsum: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	write(os.Stdout, s)
}

// write prints the summary, one spec a line, indented under the counts.
func write(w io.Writer, s summary) {
	fmt.Fprintf(w, "passed %d, failed %d, skipped %d (not selected: %d)\n", len(s.Passed), len(s.Failed), len(s.Skipped), s.NotSelected)
	for _, c := range s.Failed {
		fmt.Fprintf(w, "  FAIL %s\n       %s\n", c.Name, c.Reason)
	}
	for _, c := range s.Skipped {
		fmt.Fprintf(w, "  SKIP %s\n       %s\n", c.Name, c.Reason)
	}
}
