package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/switchyard-csi/switchyard/lab/soak"
)

// soakCmd runs the chaos soak and exits non-zero on any leak, loss,
// undocumented code or unfinished lifecycle.
func soakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	n := fs.Int("lifecycles", 1000, "volume lifecycles to run")
	callers := fs.Int("callers", 8, "concurrent callers")
	seed := fs.Uint64("seed", 1, "seed of the plan, the fault schedule and the simulators' error draws")
	rate := fs.Float64("fault-rate", 0.1, "probability that one simulator operation fails")
	noChaos := fs.Bool("no-chaos", false, "only the error rate: no latency spikes, dropped connections or restarts")
	kill := fs.Bool("kill", false, "run the switchyard binary as a subprocess and kill it with SIGKILL mid-call now and then")
	bin := fs.String("switchyard", defaultBinary(), "with --kill: the switchyard binary")
	dir := fs.String("dir", "", "scratch folder (default: a temporary one)")
	keep := fs.Bool("keep", false, "keep the scratch folder")
	verbose := fs.Bool("v", false, "show the driver's warnings")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := soak.Options{Lifecycles: *n, Callers: *callers, Seed: *seed, FaultRate: *rate, NoChaos: *noChaos,
		Kill: *kill, Switchyard: *bin, Dir: *dir, Keep: *keep, Progress: stderr}
	if *verbose {
		o.Log = stderr
	}
	r, err := soak.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 1
	}
	r.Write(stdout)
	if !r.OK() {
		return 1
	}
	return 0
}
