package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/switchyard-csi/switchyard/lab/startupbench"
)

// Targets from the foundation issue.
const (
	maxFirstProbe = 100 * time.Millisecond
	maxIdleRSS    = 30 << 20
)

// benchCmd measures start-up and idle memory of the real binary and exits
// non-zero when a target is missed.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	bin := fs.String("switchyard", defaultBinary(), "the switchyard binary to measure")
	n := fs.Int("connections", 100, "connection files in the proxy's folder")
	runs := fs.Int("runs", 5, "start-ups to measure (the median is judged)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var probes []time.Duration
	var last startupbench.Result
	for i := range *runs {
		r, err := startupbench.Run(ctx, *bin, *n)
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		probes = append(probes, r.FirstProbe)
		last = r
		fmt.Fprintf(stdout, "run %d: first Probe %s after start; RSS idle %.1f MiB, after using all %d connections %.1f MiB (%d volumes listed)\n",
			i+1, r.FirstProbe.Round(time.Millisecond), mib(r.RSSIdle), r.Connections, mib(r.RSSWarm), r.Volumes)
	}
	med := median(probes)
	ok := med <= maxFirstProbe && last.RSSIdle <= maxIdleRSS && last.RSSWarm <= maxIdleRSS
	fmt.Fprintf(stdout, "switchyard with %d connections: first Probe median %s (target ≤ %s); idle RSS %.1f MiB, warm %.1f MiB (target ≤ %d MiB): %s\n",
		*n, med.Round(time.Millisecond), maxFirstProbe, mib(last.RSSIdle), mib(last.RSSWarm), maxIdleRSS>>20, verdict(ok))
	if !ok {
		return 1
	}
	return 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
