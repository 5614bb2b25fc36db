package benchtable

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Write prints t as a Markdown table, the bound beside each figure it
// limits.
func (t Table) Write(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n%s", t.Backend, t.About)
	if t.Latency > 0 {
		fmt.Fprintf(w, "; latency %s per round trip, at most %d calls in flight to the host", t.Latency, t.Slots)
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintln(w, "| callers | op | ops/s (bound) | p50 (bound) | p99 | round trips/op | driver CPU/op | simulator CPU/op | driver RSS |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range t.Rows {
		rate, p50 := fmt.Sprintf("%.0f", r.PerSecond), msec(r.P50)
		if r.Bound > 0 {
			rate += fmt.Sprintf(" (%.0f)", r.BoundPerSec)
			p50 += " (" + msec(r.Bound) + ")"
		}
		rt, sim := "–", "–"
		if t.Latency > 0 {
			rt, sim = fmt.Sprintf("%.2f", r.RoundTrips), msec(r.SimCPU)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %.1f MiB |\n",
			r.Callers, r.Op, rate, p50, msec(r.P99), rt, msec(r.DriverCPU), sim, float64(r.DriverRSS)/(1<<20))
	}
	fmt.Fprintln(w)
	t.writeConnections(w)
}

// writeConnections says how many TCP connections the simulator accepted
// per batch, where it counts them: whether the driver keeps them alive.
func (t Table) writeConnections(w io.Writer) {
	var parts []string
	for _, r := range t.Rows {
		if r.Connections > 0 {
			parts = append(parts, fmt.Sprintf("%s at %d callers %d", r.Op, r.Callers, r.Connections))
		}
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "New TCP connections the simulator accepted per batch (the rest kept alive): %s.\n\n", strings.Join(parts, ", "))
}

func msec(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
