package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/benchtable"
	"github.com/switchyard-csi/switchyard/lab/startupbench"
)

// Targets from the foundation issue.
const (
	maxFirstProbe = 100 * time.Millisecond
	maxIdleRSS    = 30 << 20
)

// benchCmd prints the per-backend tables (lab/benchtable), then measures
// start-up and idle memory of the real binary; it exits non-zero when a
// batch fails or a start-up target is missed.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	bin := fs.String("switchyard", defaultBinary(), "the switchyard binary to measure")
	n := fs.Int("connections", 100, "start-up: connection files in the proxy's folder")
	runs := fs.Int("runs", 5, "start-up: start-ups to measure (the median is judged)")
	backends := fs.String("backends", strings.Join(benchtable.Backends, ","), "the backends' tables to print, comma-separated (none: \"\")")
	callers := fs.String("callers", "1,16,64", "concurrent callers of each batch, comma-separated")
	ops := fs.Int("ops", 200, "creates (then deletes) per batch")
	latency := fs.Duration("latency", 5*time.Millisecond, "the simulated hosts' latency per round trip")
	dir := fs.String("dir", "", "where the driver and the simulated hosts keep their state (default: a temporary directory; /dev/shm keeps the file systems' cost out)")
	startup := fs.Bool("startup", true, "also run the start-up and memory benchmark")
	verbose := fs.Bool("verbose", false, "the driver's and the simulators' logs on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *backends != "" {
		o := benchtable.Options{Switchyard: *bin, Ops: *ops, Latency: *latency, Dir: *dir}
		for _, b := range strings.Split(*backends, ",") {
			o.Backends = append(o.Backends, strings.TrimSpace(b))
		}
		for _, c := range strings.Split(*callers, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || v < 1 {
				fmt.Fprintf(stderr, "bench: --callers %q: want positive whole numbers, comma-separated\n", *callers)
				return 2
			}
			o.Callers = append(o.Callers, v)
		}
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		o.Self = self
		if *verbose {
			o.Stderr = stderr
		}
		fmt.Fprintf(stdout, "## switchyard-lab bench: %s, %s\n\n", *bin, time.Now().UTC().Format(time.RFC3339))
		tables, err := benchtable.Run(ctx, o)
		for _, t := range tables {
			t.Write(stdout)
		}
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		fmt.Fprintf(stdout, "CPU figures come from each process's /proc/<pid>/stat in 10 ms ticks: ±%.2f ms per op at %d ops.\n\n",
			10/float64(*ops), *ops)
	}
	if !*startup {
		return 0
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
