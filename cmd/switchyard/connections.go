package main

// `switchyard connections`: which connections the proxy has, whether each
// loads, what backend it is, which release the backend runs and how many
// volumes it holds for this driver.
//
// Two sources:
//   - --driver-config-file (alias --config): builds each connection from
//     its file as the controller would (so a parse error names the file)
//     and asks the backend itself for its version and volumes;
//   - --endpoint: asks a running controller over its CSI socket. CSI has no
//     call that lists connections, so this counts volumes per connection
//     from the handles ListVolumes returns; a connection that cannot be
//     listed fails the list, and the controller's message names it.
//
// --kubeconfig (with either, or alone) adds what the cluster holds: the
// PersistentVolumes of --csi-name per connection (connections_kube.go).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/assembly"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// connRow is one line of the listing.
type connRow struct {
	name, state, typ, family, version string
	volumes                           string // a count, or "-" when unknown
	pvs                               string // PersistentVolumes naming it (--kubeconfig)
	problem                           string // why state is not "loaded"
}

const connectionsUsage = `usage: switchyard connections (--driver-config-file <main.yaml> | --endpoint unix:///path/csi.sock) [--kubeconfig <file> [--context <name>] --csi-name <driver>]
       switchyard connections --kubeconfig <file> [--context <name>] --csi-name <driver>`

func connectionsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("switchyard connections", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("driver-config-file", "", "main config file (as the controller runs with)")
	fs.StringVar(cfgFile, "config", "", "alias of --driver-config-file")
	endpoint := fs.String("endpoint", "", "a running controller's CSI socket (unix:///csi/csi.sock)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up on one backend after this long")
	kubeconfig := fs.String("kubeconfig", "", "also count the PersistentVolumes of --csi-name per connection in the cluster this kubeconfig file reaches (with kubectl)")
	kubeContext := fs.String("context", "", "with --kubeconfig: the kubeconfig context to use (default: its current context)")
	kubectl := fs.String("kubectl", "kubectl", "with --kubeconfig: the kubectl program to run")
	csiName := fs.String("csi-name", "", "with --kubeconfig: the CSI driver name of the PersistentVolumes (the CSIDriver's name)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, connectionsUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *cfgFile != "" && *endpoint != "", *cfgFile == "" && *endpoint == "" && *kubeconfig == "":
		fmt.Fprintln(stderr, connectionsUsage)
		return 2
	case *kubeContext != "" && *kubeconfig == "":
		fmt.Fprintln(stderr, "connections: --context needs --kubeconfig")
		return 2
	case *kubeconfig != "" && *csiName == "":
		fmt.Fprintln(stderr, "connections: --kubeconfig needs --csi-name <driver>: the CSIDriver's name, which tells this driver's PersistentVolumes from other drivers'")
		return 2
	}
	var kube *kubeHandles
	if *kubeconfig != "" {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		kh, err := kubeCluster{kubectl: *kubectl, kubeconfig: *kubeconfig, context: *kubeContext}.handles(ctx, *csiName)
		cancel()
		if err != nil {
			fmt.Fprintf(stderr, "connections: %v\n", err)
			return 1
		}
		kube = &kh
	}
	var rows []connRow
	var code int
	switch {
	case *endpoint != "":
		rows, code = connectionsFromSocket(*endpoint, *timeout, stdout, stderr)
	case *cfgFile != "":
		rows, code = connectionsFromConfig(*cfgFile, *timeout, stderr)
	default:
		rows = []connRow{}
	}
	if rows != nil && kube != nil {
		rows = withPVCounts(rows, kube.volumes, *cfgFile != "")
		code = max(code, exitOf(rows))
	}
	if rows != nil {
		printConnections(stdout, rows, kube != nil)
	}
	return code
}

// connectionsFromConfig builds every connection as the controller does.
// Exit 1 when any connection does not load or cannot be reached.
func connectionsFromConfig(file string, timeout time.Duration, stderr io.Writer) ([]connRow, int) {
	p, err := assembly.New(assembly.Options{ConfigFile: file, CSIName: "org.switchyard.connections", Modes: []string{assembly.ModeController},
		NodeName: "switchyard-connections", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintf(stderr, "connections: %v\n", err)
		return nil, 1
	}
	defer p.Close()
	if p.Connections == nil { // a single backend, no proxy
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		row := connRow{name: "(main config)", state: "loaded", typ: "-", family: "-"}
		describeBackend(ctx, &row, p.Controller)
		return []connRow{row}, exitOf([]connRow{row})
	}
	names, err := p.Connections.Names()
	if err != nil {
		fmt.Fprintf(stderr, "connections: reading the connections folder: %v\n", err)
		return nil, 1
	}
	rows := make([]connRow, 0, len(names))
	for _, n := range names {
		rows = append(rows, connectionRow(p.Connections, n, timeout))
	}
	return rows, exitOf(rows)
}

func connectionRow(c *proxy.Connections, name string, timeout time.Duration) connRow {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	row := connRow{name: name, typ: "-", family: "-", version: "-", volumes: "-"}
	l, err := c.Acquire(ctx, name, false)
	if err != nil {
		// The message names the file and what in it is wrong.
		row.state, row.problem = "parse error", status.Convert(err).Message()
		return row
	}
	defer l.Release()
	row.state, row.typ, row.family = "loaded", l.Type.Name, familyName(l.Type.Name)
	describeBackend(ctx, &row, l.Driver)
	return row
}

// describeBackend fills version and volume count from the backend itself;
// a backend that cannot be listed is "unreachable" with the reason.
func describeBackend(ctx context.Context, row *connRow, d csipb.ControllerServer) {
	row.version = "-"
	// The list first: against a backend that is down it fails with the
	// reason (connection refused) before the timeout is spent.
	n, err := countVolumes(ctx, d.ListVolumes)
	switch {
	case status.Code(err) == codes.Unimplemented:
		row.volumes = "-"
	case err != nil:
		row.state, row.volumes, row.problem = "unreachable", "-", status.Convert(err).Message()
		return
	default:
		row.volumes = fmt.Sprint(n)
	}
	if vr, ok := d.(interface {
		BackendVersion(context.Context) (string, error)
	}); ok {
		if v, err := vr.BackendVersion(ctx); err == nil {
			row.version = v
		}
	}
}

type listFn func(context.Context, *csipb.ListVolumesRequest) (*csipb.ListVolumesResponse, error)

func countVolumes(ctx context.Context, list listFn) (int, error) {
	n := 0
	for tok := ""; ; {
		resp, err := list(ctx, &csipb.ListVolumesRequest{StartingToken: tok})
		if err != nil {
			return 0, err
		}
		n += len(resp.GetEntries())
		if tok = resp.GetNextToken(); tok == "" {
			return n, nil
		}
	}
}

// connectionsFromSocket counts volumes per connection from a running
// controller's ListVolumes.
func connectionsFromSocket(endpoint string, timeout time.Duration, stdout, stderr io.Writer) ([]connRow, int) {
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(stderr, "connections: %s: %v\n", endpoint, err)
		return nil, 1
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	info, err := csipb.NewIdentityClient(cc).GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
	if err != nil {
		fmt.Fprintf(stderr, "connections: %s: GetPluginInfo: %s\n", endpoint, status.Convert(err).Message())
		return nil, 1
	}
	fmt.Fprintf(stdout, "controller %s %s at %s\n", info.GetName(), info.GetVendorVersion(), endpoint)
	ctl := csipb.NewControllerClient(cc)
	counts := map[string]int{}
	for tok := ""; ; {
		resp, err := ctl.ListVolumes(ctx, &csipb.ListVolumesRequest{StartingToken: tok})
		if err != nil {
			fmt.Fprintf(stderr, "connections: ListVolumes: %s\n", status.Convert(err).Message())
			return nil, 1
		}
		for _, e := range resp.GetEntries() {
			conn, _, ok := proxy.Parse(proxy.VolumePrefix, e.GetVolume().GetVolumeId())
			if !ok {
				conn = "(not a proxy handle)"
			}
			counts[conn]++
		}
		if tok = resp.GetNextToken(); tok == "" {
			break
		}
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	rows := make([]connRow, 0, len(names))
	for _, n := range names {
		rows = append(rows, connRow{name: n, state: "listed", typ: "-", family: "-", version: "-", volumes: fmt.Sprint(counts[n])})
	}
	fmt.Fprintln(stdout, "(over the socket only connections holding volumes show; --driver-config-file lists every file, its type and version)")
	return rows, 0
}

func exitOf(rows []connRow) int {
	for _, r := range rows {
		if r.problem != "" {
			return 1
		}
	}
	return 0
}

// familyName is the protocol and kind a driver type serves, from the
// protocol word in democratic-csi's type names (the proxy's sets use the
// same rule).
func familyName(typ string) string {
	for _, w := range strings.Split(typ, "-") {
		switch w {
		case "nfs", "smb", "lustre":
			return w + ", file"
		case "iscsi", "nvmeof":
			return w + ", block"
		}
	}
	if strings.Contains(typ, "zvol") {
		return "local, block"
	}
	if strings.Contains(typ, "local") {
		return "local, file"
	}
	return typ
}

func printConnections(w io.Writer, rows []connRow, pvs bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "CONNECTION\tSTATE\tTYPE\tFAMILY\tVERSION\tVOLUMES"
	if pvs {
		head += "\tPVS"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", r.name, r.state, r.typ, r.family, r.version, r.volumes)
		if pvs {
			line += "\t" + r.pvs
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
	for _, r := range rows {
		if r.problem != "" {
			fmt.Fprintf(w, "%s: %s\n", r.name, r.problem)
		}
	}
}
