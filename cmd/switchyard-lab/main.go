// Command switchyard-lab runs the storage lab: the demo, benchmarks, and
// (in later versions) simulators and storage targets.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/switchyard-csi/switchyard/lab/demo"
	"github.com/switchyard-csi/switchyard/lab/simproc"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

func main() {
	// bench runs each simulated host in a child process: this binary
	// started again with simproc.Env set.
	if spec := os.Getenv(simproc.Env); spec != "" {
		os.Exit(simproc.Serve(spec, os.Stdin, os.Stdout))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: switchyard-lab <command> [flags]

commands:
  demo    start switchyard in proxy mode on a scratch folder and walk a volume
          through create, stage, publish, write, snapshot, restore, expand,
          unpublish and delete
  bench   one table per backend (ops/s, p50/p99, round trips, driver and simulator
          CPU per op, RSS at 1, 16 and 64 callers, beside the latency-only bound),
          then the start-up and memory benchmark of the switchyard binary
  soak    the chaos soak: volume lifecycles through one proxy over every simulator
          while they fail, slow down, drop connections and restart; then a leak check
  zfs-ssh the ZFS-over-SSH simulator (zfs, zpool, targetcli, nvmetcli) on a state directory
  truenas the TrueNAS middleware simulator (REST, JSON-RPC and legacy WebSocket, optional SSH)
  infinia the DDN Infinia REST simulator (block volumes over NVMe-oF/TCP)
  synology the Synology DSM Web API simulator (iSCSI LUNs, NFS and SMB shares)
  vm      the QEMU storage VM: build (and cache) its image, run a script in it, or open a shell
  cluster the local Kubernetes cluster (control plane and real nodes): up, down, status
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	switch args[0] {
	case "demo":
		fs := flag.NewFlagSet("demo", flag.ContinueOnError)
		bin := fs.String("switchyard", defaultBinary(), "the switchyard binary to run")
		verbose := fs.Bool("v", false, "show switchyard's own log too")
		keep := fs.Bool("keep", false, "keep the scratch folder")
		inVM := fs.Bool("vm", false, "run the demo inside the storage VM, with a real NFS mount and NVMe/TCP connect (needs --static-dir)")
		staticDir := fs.String("static-dir", "", "with --vm: the folder of switchyard and switchyard-lab built with CGO_ENABLED=0")
		withKernel := fs.Bool("kernel", false, "(inside the storage VM) make the simulators' targets real and attach through them")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if *inVM {
			if err := demo.RunInVM(ctx, demo.VMOptions{StaticDir: *staticDir, Out: stdout}); err != nil {
				fmt.Fprintln(stderr, "demo in the VM failed:", err)
				return 1
			}
			return 0
		}
		o := demo.Options{Switchyard: *bin, Out: stdout, Keep: *keep}
		if *withKernel {
			k := kernel.New(kernel.Options{})
			if ok, why := k.Available(); !ok {
				fmt.Fprintln(stderr, "demo --kernel: this kernel has no storage targets:", why)
				return 1
			}
			o.Kernel = k
		}
		if *verbose {
			o.PluginLog = stderr
		}
		if err := demo.Run(ctx, o); err != nil {
			fmt.Fprintln(stderr, "demo failed:", err)
			return 1
		}
		fmt.Fprintln(stdout, "demo finished: every step succeeded")
		return 0
	case "bench":
		return benchCmd(ctx, args[1:], stdout, stderr)
	case "soak":
		return soakCmd(ctx, args[1:], stdout, stderr)
	case "zfs-ssh":
		return zfsSSHCmd(ctx, args[1:], stdout, stderr)
	case "truenas":
		return truenasCmd(ctx, args[1:], stdout, stderr)
	case "infinia":
		return infiniaCmd(ctx, args[1:], stdout, stderr)
	case "synology":
		return synologyCmd(ctx, args[1:], stdout, stderr)
	case "vm":
		return vmCmd(ctx, args[1:], stdout, stderr)
	case "cluster":
		return clusterCmd(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
	return 2
}

// defaultBinary is the switchyard next to this binary (bin/), else PATH's.
func defaultBinary() string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "switchyard")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "switchyard"
}
