package main

// `switchyard orphans`: what the backends hold that Kubernetes does not
// know about, and the reverse. It lists; with --delete, after a
// confirmation, it deletes the backend objects it listed (orphans_delete.go).
//
// The handles Kubernetes knows come from the cluster (--kubeconfig, read
// with the user's kubectl: kubectl.go) or from a file (or stdin), one per
// line, for example:
//
//	kubectl get pv -o jsonpath='{range .items[?(@.spec.csi.driver=="org.democratic-csi.proxy")]}{.spec.csi.volumeHandle}{"\n"}{end}' > handles
//	kubectl get volumesnapshotcontents -o jsonpath='{range .items[?(@.spec.driver=="org.democratic-csi.proxy")]}{.status.snapshotHandle}{"\n"}{end}' >> handles
//	switchyard orphans --driver-config-file /config/driver.yaml --handles handles
//
// The backends are read through the driver's own ListVolumes and
// ListSnapshots, so only objects this driver made (its user properties)
// are listed and ids are the handles Kubernetes stores.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/assembly"
)

// orphanReport is what orphans found.
type orphanReport struct {
	Volumes, Snapshots         []string          // on the backend, unknown to Kubernetes
	MissingVolumes, MissingSna []string          // known to Kubernetes, gone from the backend
	sources                    map[string]string // snapshot handle → its source volume's handle
}

const orphansUsage = `usage: switchyard orphans --driver-config-file <main.yaml> (--kubeconfig <file> [--context <name>] --csi-name <driver> | --handles <file|->) [--delete [--yes]]
read-only unless --delete`

func orphansCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("switchyard orphans", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, orphansUsage)
		fs.PrintDefaults()
	}
	cfgFile := fs.String("driver-config-file", "", "main config file (as the controller runs with)")
	handles := fs.String("handles", "", "file of the handles Kubernetes knows (PV volumeHandle, VolumeSnapshotContent snapshotHandle), one per line; - for stdin (instead of --kubeconfig)")
	kubeconfig := fs.String("kubeconfig", "", "read the handles from the cluster this kubeconfig file reaches: the PersistentVolumes and VolumeSnapshotContents of --csi-name, with kubectl (instead of --handles)")
	kubeContext := fs.String("context", "", "with --kubeconfig: the kubeconfig context to use (default: its current context)")
	kubectl := fs.String("kubectl", "kubectl", "with --kubeconfig: the kubectl program to run")
	csiName := fs.String("csi-name", "org.switchyard.orphans", "CSI driver name, as in the CSIDriver object and the PersistentVolumes' spec.csi.driver (required with --kubeconfig)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	del := fs.Bool("delete", false, "delete the volumes and snapshots on the backends that no PersistentVolume or VolumeSnapshotContent names, after a confirmation")
	yes := fs.Bool("yes", false, "with --delete: do not ask for a confirmation")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *cfgFile == "" || (*handles == "") == (*kubeconfig == ""):
		fmt.Fprintln(stderr, orphansUsage)
		return 2
	case *kubeContext != "" && *kubeconfig == "":
		fmt.Fprintln(stderr, "orphans: --context needs --kubeconfig")
		return 2
	case *kubeconfig != "" && !set["csi-name"]:
		fmt.Fprintln(stderr, "orphans: --kubeconfig needs --csi-name <driver>: the CSIDriver's name, which tells this driver's PersistentVolumes and VolumeSnapshotContents from other drivers'")
		return 2
	case *del && !*yes && *handles == "-":
		fmt.Fprintln(stderr, "orphans: --delete with --handles - needs --yes: standard input carries the handles, so it cannot carry the confirmation too")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var cluster *kubeHandles
	var known map[string]bool
	if *kubeconfig != "" {
		kh, err := kubeCluster{kubectl: *kubectl, kubeconfig: *kubeconfig, context: *kubeContext}.handles(ctx, *csiName)
		if err != nil {
			fmt.Fprintf(stderr, "orphans: %v\nno report: nothing was changed\n", err)
			return 1
		}
		cluster, known = &kh, kh.known
	} else {
		var err error
		if known, err = readHandles(*handles); err != nil {
			fmt.Fprintf(stderr, "orphans: %v\n", err)
			return 2
		}
	}
	p, err := assembly.New(assembly.Options{ConfigFile: *cfgFile, CSIName: *csiName, Modes: []string{assembly.ModeController},
		NodeName: "switchyard-orphans", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintf(stderr, "orphans: %v\n", err)
		return 2
	}
	defer p.Close()
	r, err := findOrphans(ctx, p.Controller, known)
	if err != nil {
		// A backend that cannot be listed would make every handle look
		// missing: no report at all rather than a wrong one.
		fmt.Fprintf(stderr, "orphans: %v\nno report: a backend that cannot be listed would make its volumes look missing; nothing was changed\n", err)
		if *del {
			fmt.Fprintln(stderr, "nothing was deleted: every backend must be listed before anything is deleted")
		}
		return 1
	}
	printReport(stdout, r, !*del)
	var refusals []string
	if cluster != nil {
		refusals = cluster.doubts(r, *csiName)
		for _, d := range refusals {
			fmt.Fprintf(stderr, "orphans: %s\n", d)
		}
	}
	if !*del {
		return 0
	}
	if len(refusals) > 0 {
		fmt.Fprintln(stderr, "nothing was deleted: the cluster's answer above leaves the report in doubt")
		return 1
	}
	return deleteOrphans(ctx, p.Controller, r, *yes, stdin, stdout, stderr)
}

func readHandles(path string) (map[string]bool, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--handles: %w", err)
		}
		defer f.Close()
		in = f
	}
	known := map[string]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if h := strings.TrimSpace(sc.Text()); h != "" && !strings.HasPrefix(h, "#") {
			known[h] = true
		}
	}
	return known, sc.Err()
}

// findOrphans lists every volume and snapshot through the controller and
// compares them with the known handles.
func findOrphans(ctx context.Context, c csipb.ControllerServer, known map[string]bool) (orphanReport, error) {
	r := orphanReport{sources: map[string]string{}}
	vols := map[string]bool{}
	for tok := ""; ; {
		resp, err := c.ListVolumes(ctx, &csipb.ListVolumesRequest{StartingToken: tok})
		if err != nil {
			return r, fmt.Errorf("listing volumes: %s", status.Convert(err).Message())
		}
		for _, e := range resp.GetEntries() {
			vols[e.GetVolume().GetVolumeId()] = true
		}
		if tok = resp.GetNextToken(); tok == "" {
			break
		}
	}
	snaps := map[string]bool{}
	for tok := ""; ; {
		resp, err := c.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{StartingToken: tok})
		if err != nil {
			return r, fmt.Errorf("listing snapshots: %s", status.Convert(err).Message())
		}
		for _, e := range resp.GetEntries() {
			snaps[e.GetSnapshot().GetSnapshotId()] = true
			r.sources[e.GetSnapshot().GetSnapshotId()] = e.GetSnapshot().GetSourceVolumeId()
		}
		if tok = resp.GetNextToken(); tok == "" {
			break
		}
	}
	for v := range vols {
		if !known[v] {
			r.Volumes = append(r.Volumes, v)
		}
	}
	for s := range snaps {
		if !known[s] {
			r.Snapshots = append(r.Snapshots, s)
		}
	}
	for h := range known {
		switch {
		case vols[h] || snaps[h]:
		case strings.HasPrefix(h, "s:") || strings.Contains(h, "@"):
			r.MissingSna = append(r.MissingSna, h)
		default:
			r.MissingVolumes = append(r.MissingVolumes, h)
		}
	}
	for _, l := range [][]string{r.Volumes, r.Snapshots, r.MissingVolumes, r.MissingSna} {
		sort.Strings(l)
	}
	return r, nil
}

func printReport(w io.Writer, r orphanReport, readOnly bool) {
	section := func(title string, ids []string) {
		fmt.Fprintf(w, "%s: %d\n", title, len(ids))
		for _, id := range ids {
			fmt.Fprintf(w, "  %s\n", id)
		}
	}
	section("volumes on the backend with no PersistentVolume", r.Volumes)
	section("snapshots on the backend with no VolumeSnapshotContent", r.Snapshots)
	section("handles Kubernetes knows whose volume is gone from the backend", r.MissingVolumes)
	section("handles Kubernetes knows whose snapshot is gone from the backend", r.MissingSna)
	if readOnly {
		fmt.Fprintln(w, "read-only report: nothing was deleted")
	}
}
