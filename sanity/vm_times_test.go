package sanity

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
)

// The seconds each configuration's specs took, written next to the counts
// ($SANITY_REPORT.times): the VM tier runs inside CI's time budget, so a
// configuration joins vmTargetNames with its cost measured (TestSanityInVM
// logs the file).
var _ = ReportAfterSuite("times", func(r Report) {
	path := os.Getenv("SANITY_REPORT")
	if path == "" {
		return
	}
	// A configuration's specs run one after another, so its cost is the
	// span from its first spec's start to its last one's end (its plugin's
	// start included); specs the focus filtered out do not count.
	type span struct{ start, end time.Time }
	spans := map[string]*span{}
	for _, s := range r.SpecReports {
		if len(s.ContainerHierarchyTexts) == 0 || s.StartTime.IsZero() || s.EndTime.IsZero() ||
			s.State.Is(types.SpecStateSkipped|types.SpecStatePending) && s.Failure.Message == "" {
			continue
		}
		n := s.ContainerHierarchyTexts[0]
		sp := spans[n]
		if sp == nil {
			sp = &span{s.StartTime, s.EndTime}
			spans[n] = sp
		}
		if s.StartTime.Before(sp.start) {
			sp.start = s.StartTime
		}
		if s.EndTime.After(sp.end) {
			sp.end = s.EndTime
		}
	}
	per := map[string]time.Duration{}
	for n, sp := range spans {
		per[n] = sp.end.Sub(sp.start)
	}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %9s\n", "configuration", "seconds")
	var total time.Duration
	for _, n := range names {
		fmt.Fprintf(&b, "%-40s %9.1f\n", n, per[n].Seconds())
		total += per[n]
	}
	fmt.Fprintf(&b, "%-40s %9.1f\n", "all", total.Seconds())
	Expect(os.WriteFile(path+".times", []byte(b.String()), 0o644)).To(Succeed())
})
