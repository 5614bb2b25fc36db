package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/cluster"
	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/lab/vm"
)

const clusterUsage = `usage: switchyard-lab cluster <command> [flags]

  up [--vm] [--state-dir D] [--fresh] [--image TAR]... [--wait DURATION]
                      start the local Kubernetes cluster (etcd, control plane, a real node on the
                      host; with --vm also a node in the storage VM) and leave it running; prints
                      each step's time and the kubeconfig path. --fresh starts from an empty state
                      dir (else certificates, etcd data and images are reused: a warm start).
                      --image imports a docker-archive tarball into the host node's containerd.
                      --wait waits that long while another local cluster runs on this machine.
  down [--state-dir D]
                      stop it and clean the host (mounts, devices, cgroups); the state dir stays
  status [--state-dir D]
                      the cluster's processes, apiserver readiness and nodes
  check [--tier] [--vm]
                      say whether this machine can run the local cluster (--vm: and the storage
                      VM's node). --tier answers for make e2e as lab/testtier does for tests: exit 0
                      can run; 3 cannot, skip (the reason on stdout); 1 cannot, and LAB_REQUIRE
                      names the tier (cluster, or vm with --vm), so the run must fail.

Root only. The Kubernetes binaries come from scripts/ensure-kube.sh (make cluster-up runs it).
`

// clusterCmd runs the local cluster of lab/cluster.
func clusterCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, clusterUsage)
		return 2
	}
	fs := flag.NewFlagSet("cluster "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", cluster.DefaultStateDir, "the cluster's state directory")
	switch args[0] {
	case "check":
		tier := fs.Bool("tier", false, "answer for a test tier: exit 3 (skip, with the reason) when the cluster cannot run, 1 when LAB_REQUIRE requires it")
		withVM := fs.Bool("vm", false, "also check the storage VM's node (tier vm)")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		return clusterCheck(*tier, *withVM, stdout, stderr)
	case "up":
		withVM := fs.Bool("vm", false, "also start a kubelet node in the storage VM")
		fresh := fs.Bool("fresh", false, "remove the state dir first (a cold start)")
		wait := fs.Duration("wait", 0, "wait this long while another local cluster runs (one per machine)")
		var images multiFlag
		fs.Var(&images, "image", "docker-archive tarball to import into the host node (repeatable)")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		o := cluster.Options{StateDir: *stateDir, Images: images, Log: stdout, WaitForMachine: *wait}
		if *fresh {
			if c, err := cluster.Attach(*stateDir); err == nil && len(c.RunningProcesses()) > 0 {
				fmt.Fprintf(stderr, "cluster up --fresh: the cluster in %s is running; stop it first (switchyard-lab cluster down)\n", *stateDir)
				return 1
			}
			if err := os.RemoveAll(*stateDir); err != nil {
				fmt.Fprintln(stderr, "cluster up --fresh:", err)
				return 1
			}
		}
		if *withVM {
			n, err := cluster.VMNode(o)
			if err != nil {
				fmt.Fprintln(stderr, "cluster up --vm:", err)
				return 1
			}
			o.ExtraNodes = append(o.ExtraNodes, n)
		}
		c, err := cluster.StartLocal(ctx, o)
		if err != nil {
			fmt.Fprintln(stderr, "cluster up:", err)
			return 1
		}
		fmt.Fprintf(stdout, "export KUBECONFIG=%s\n", c.Kubeconfig())
		return 0
	case "down":
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		c, err := cluster.Attach(*stateDir)
		if err != nil {
			fmt.Fprintln(stderr, "cluster down:", err)
			return 1
		}
		start := time.Now()
		if err := c.Stop(ctx); err != nil {
			fmt.Fprintln(stderr, "cluster down:", err)
			return 1
		}
		fmt.Fprintf(stdout, "cluster: stopped in %.1fs (state kept in %s)\n", time.Since(start).Seconds(), *stateDir)
		return 0
	case "status":
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		return clusterStatus(ctx, *stateDir, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, clusterUsage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown cluster command %q\n%s", args[0], clusterUsage)
	return 2
}

func clusterStatus(ctx context.Context, stateDir string, stdout, stderr io.Writer) int {
	c, err := cluster.Attach(stateDir)
	if err != nil {
		fmt.Fprintln(stderr, "cluster status:", err)
		return 1
	}
	fmt.Fprintf(stdout, "state dir   %s\nkubeconfig  %s\n", c.StateDir(), c.Kubeconfig())
	running := c.RunningProcesses()
	if len(running) == 0 {
		fmt.Fprintln(stdout, "processes   none running")
		return 3
	}
	fmt.Fprintf(stdout, "processes   %s\n", strings.Join(running, ", "))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := c.Kubectl(ctx, nil, "get", "nodes", "-o", "wide")
	if err != nil {
		fmt.Fprintln(stderr, "cluster status:", err)
		return 1
	}
	fmt.Fprint(stdout, string(out))
	return 0
}

// Exit codes of cluster check --tier.
const (
	checkRuns = 0
	checkFail = 1
	checkSkip = 3
)

// tierNeed is one tier cluster check looks at, and how to tell whether
// this machine can run it.
type tierNeed struct {
	name      string
	available func() (bool, string)
}

// clusterCheck says whether the local cluster (and with withVM the storage
// VM's node) can run here.
func clusterCheck(tier, withVM bool, stdout, stderr io.Writer) int {
	needs := []tierNeed{{testtier.Cluster, cluster.Available}}
	if withVM {
		needs = append(needs, tierNeed{testtier.VM, vm.Available})
	}
	return checkTiers(tier, needs, stdout, stderr)
}

// checkTiers answers for the first of needs that cannot run. With tier it
// decides as lab/testtier.Need does: a tier that cannot run is skipped
// with its reason unless LAB_REQUIRE names it, so make e2e on a machine
// without the cluster says why instead of failing half-way, and CI, which
// requires the tier, fails loudly.
func checkTiers(tier bool, needs []tierNeed, stdout, stderr io.Writer) int {
	for _, n := range needs {
		ok, why := n.available()
		if ok {
			continue
		}
		switch {
		case !tier:
			fmt.Fprintf(stderr, "cluster: not available (%s): %s\n", n.name, why)
			return checkFail
		case testtier.Required(n.name):
			fmt.Fprintf(stderr, "tier %q is required (LAB_REQUIRE=%s) but cannot run: %s\n", n.name, os.Getenv("LAB_REQUIRE"), why)
			return checkFail
		default:
			fmt.Fprintf(stdout, "tier %q skipped: %s\n", n.name, why)
			return checkSkip
		}
	}
	fmt.Fprintln(stdout, "cluster: available")
	return checkRuns
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
