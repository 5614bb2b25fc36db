package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// DefaultStateDir is where `switchyard-lab cluster up` keeps its cluster.
const DefaultStateDir = "/var/lib/switchyard-lab/cluster"

// Ports of the local cluster (the lab's range 16400-16499, etcd's 2379x).
const (
	APIServerPort         = 16443
	EtcdClientPort        = 23791
	EtcdPeerPort          = 23792
	HostKubeletPort       = 16450
	HostKubeletHealthz    = 16451
	ControllerManagerPort = 16457
	SchedulerPort         = 16459
)

// HostNodeName is the Node name of the kubelet on the host.
const HostNodeName = "lab-host"

// Local is a cluster of processes on this machine: etcd, the control
// plane, and real kubelet nodes (the host's, and those of Options.ExtraNodes).
type Local struct {
	o      Options
	dir    string
	bin    string
	pki    *pki
	log    io.Writer
	client *http.Client
	// started is when StartLocal began (zero for Attach).
	started time.Time

	mu        sync.Mutex
	heartbeat map[string]context.CancelFunc // fake nodes' lease renewers
}

type localProvider struct{}

func init() { register(localProvider{}) }

func (localProvider) Name() string              { return "local" }
func (localProvider) Available() (bool, string) { return Available() }
func (localProvider) Start(ctx context.Context, o Options) (Cluster, error) {
	return StartLocal(ctx, o)
}

// Kubeconfig is the admin kubeconfig (system:masters).
func (c *Local) Kubeconfig() string { return c.path("admin.kubeconfig") }

// StateDir is the cluster's state directory.
func (c *Local) StateDir() string { return c.dir }

// BinDir holds the Kubernetes binaries (kubelet for extra nodes).
func (c *Local) BinDir() string { return c.bin }

// APIServerURL is the apiserver as the host reaches it.
func (c *Local) APIServerURL() string { return "https://127.0.0.1:" + strconv.Itoa(APIServerPort) }

// CACertPEM is the cluster CA certificate.
func (c *Local) CACertPEM() []byte { return c.pki.ca.CertPEM }

func (c *Local) path(p ...string) string { return filepath.Join(append([]string{c.dir}, p...)...) }

// logf prints a progress line.
func (c *Local) logf(format string, args ...any) {
	if c.log != nil {
		fmt.Fprintf(c.log, "cluster: "+format+"\n", args...)
	}
}

// step runs f and prints its duration.
func (c *Local) step(name string, f func() error) error {
	start := time.Now()
	err := f()
	if err != nil {
		c.logf("%-28s failed after %.1fs", name, time.Since(start).Seconds())
		return fmt.Errorf("%s: %w", name, err)
	}
	c.logf("%-28s %5.1fs", name, time.Since(start).Seconds())
	return nil
}

// newLocal prepares the state dir's layout and PKI without starting anything.
func newLocal(o Options) (*Local, error) {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	dir, err := filepath.Abs(o.StateDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	c := &Local{o: o, dir: dir, bin: o.BinDir, log: o.Log, heartbeat: map[string]context.CancelFunc{}}
	p, err := ensurePKI(c.path("pki"))
	if err != nil {
		return nil, err
	}
	c.pki = p
	return c, nil
}

// Attach returns the cluster whose state is in stateDir (started by
// another process, e.g. `switchyard-lab cluster up`), for Stop, status,
// fake nodes and kubeconfigs.
func Attach(stateDir string) (*Local, error) {
	if _, err := os.Stat(filepath.Join(stateDir, "pki", "ca.crt")); err != nil {
		return nil, fmt.Errorf("no cluster state in %s: %w", stateDir, err)
	}
	c, err := newLocal(Options{StateDir: stateDir})
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(c.path("bindir")); err == nil {
		c.bin = string(b)
	}
	return c, nil
}

// StartLocal starts a local cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, then the host node (containerd
// and kubelet) and Options.ExtraNodes, and waits until every node is Ready.
// On error everything started is stopped again.
func StartLocal(ctx context.Context, o Options) (_ *Local, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the local cluster needs root (kubelet, containerd, network devices)")
	}
	total := time.Now()
	var c *Local
	if err := stepOrNil(o.Log, "certificates", func() error {
		var err error
		c, err = newLocal(o)
		return err
	}); err != nil {
		return nil, err
	}
	release, err := c.claimMachine(ctx, o.WaitForMachine)
	if err != nil {
		return nil, err
	}
	defer release()
	c.started = time.Now()
	defer func() {
		if err != nil {
			c.logf("start failed, stopping what started: %v", err)
			_ = c.stop()
		}
	}()
	if c.bin == "" {
		if err := c.step("kubernetes binaries", func() error {
			var err error
			c.bin, err = EnsureBinaries(ctx, o.RepoDir)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(c.path("bindir"), []byte(c.bin), 0o644); err != nil {
		return nil, err
	}
	if err := c.startControlPlane(ctx); err != nil {
		return nil, err
	}
	var nodes []string
	if !o.NoHostNode {
		if err := c.startHostNode(ctx); err != nil {
			return nil, err
		}
		nodes = append(nodes, HostNodeName)
	}
	for _, n := range o.ExtraNodes {
		if err := c.step("node "+n.NodeName()+" started", func() error { return n.StartNode(ctx, c) }); err != nil {
			return nil, err
		}
		nodes = append(nodes, n.NodeName())
	}
	for _, n := range nodes {
		if err := c.step("node "+n+" Ready", func() error { return c.WaitNodeReady(ctx, n, 3*time.Minute) }); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, c.nodeLogHint(n))
		}
	}
	c.logf("%-28s %5.1fs (kubeconfig %s)", "cluster ready", time.Since(total).Seconds(), c.Kubeconfig())
	return c, nil
}

// stepOrNil is step for before the Local exists.
func stepOrNil(w io.Writer, name string, f func() error) error {
	c := &Local{log: w}
	return c.step(name, f)
}

// nodeLogHint names the logs to read when a node does not become Ready.
func (c *Local) nodeLogHint(node string) string {
	if node == HostNodeName {
		return "kubelet log (end):\n" + tail(c.LogPath("kubelet"), 15)
	}
	return "see the logs in " + c.path("logs")
}

// Stop stops every cluster process (extra nodes, kubelet, containerd,
// the control plane, etcd), kills what pods left, unmounts and removes
// the host paths and devices the node made. Data in the state dir stays.
func (c *Local) Stop(ctx context.Context) error {
	release, err := acquireMachineLock()
	if err != nil {
		return err
	}
	defer release()
	return c.stop()
}

func (c *Local) stop() error {
	c.mu.Lock()
	for _, cancel := range c.heartbeat {
		cancel()
	}
	c.heartbeat = map[string]context.CancelFunc{}
	c.mu.Unlock()
	ps := c.procs()
	for i := len(ps) - 1; i >= 0; i-- {
		stopProc(ps[i], 15*time.Second)
		_ = os.Remove(ps[i].file)
	}
	// The host's kubepods, devices and kubelet dirs belong to whichever
	// cluster runs now: clean them only for this one (or for none).
	var errs []error
	if owner := recordedOwner(); owner == "" || owner == c.dir {
		errs = c.cleanupHost()
	}
	c.releaseMachine()
	if c.client != nil {
		c.client.CloseIdleConnections()
	}
	return errors.Join(errs...)
}
