package soak

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Write prints the report.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "soak seed %d: %d/%d lifecycles completed in %s, %d retries\n", r.Seed, r.Completed, r.Lifecycles, r.Wall.Round(time.Millisecond), r.Retries)
	fmt.Fprintln(w, "calls by code:")
	for _, call := range sortedKeys(r.Calls) {
		var parts []string
		for _, code := range sortedKeys(r.Calls[call]) {
			parts = append(parts, fmt.Sprintf("%s %d", code, r.Calls[call][code]))
		}
		fmt.Fprintf(w, "  %-26s %s\n", call, strings.Join(parts, ", "))
	}
	if len(r.Transport) > 0 {
		var parts []string
		for _, call := range sortedKeys(r.Transport) {
			parts = append(parts, fmt.Sprintf("%s %d", call, r.Transport[call]))
		}
		fmt.Fprintf(w, "  gRPC client errors while the driver was down (not driver answers): %s\n", strings.Join(parts, ", "))
	}
	if len(r.Causes) > 0 {
		fmt.Fprintln(w, "errors by code and the fault their message points at:")
		for _, code := range sortedKeys(r.Causes) {
			var parts []string
			for _, c := range sortedKeys(r.Causes[code]) {
				parts = append(parts, fmt.Sprintf("%s %d", c, r.Causes[code][c]))
			}
			fmt.Fprintf(w, "  %-20s %s\n", code, strings.Join(parts, ", "))
		}
	}
	var parts []string
	for _, k := range sortedKeys(r.Faults) {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Faults[k]))
	}
	fmt.Fprintf(w, "faults injected: %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(w, "leaked %d, lost %d, undocumented codes %d, failed lifecycles %d\n", len(r.Leaked), len(r.Lost), len(r.Undocumented), len(r.Failed))
	list := func(title string, items []string) {
		const shown = 20
		for i, it := range items {
			if i == shown {
				fmt.Fprintf(w, "  ... and %d more\n", len(items)-shown)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", title, it)
		}
	}
	list("leaked", r.Leaked)
	list("lost", r.Lost)
	list("undocumented", r.Undocumented)
	list("failed", r.Failed)
	if r.OK() {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}
