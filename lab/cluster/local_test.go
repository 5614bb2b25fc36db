package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// TestLocalCluster starts the local cluster with its real host node and
// checks what the CSI driver will need of it: a scheduled privileged pod
// whose Bidirectional hostPath mount propagates to the host (the node
// plugin's shape), with a service account token and the apiserver reachable
// at the kubernetes service; a fake node of another zone that the
// scheduler binds to and that stays Ready past the node lifecycle
// controller's grace period; and a Stop that leaves the host clean.
func TestLocalCluster(t *testing.T) {
	ok, why := Available()
	testtier.Need(t, testtier.Cluster, ok, why)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	// A cold build takes longer than a test may: the binaries are built
	// before the tests (make cluster-up, or scripts/ensure-kube.sh).
	bin, built, err := KubeBinDir(ctx, "")
	testtier.Need(t, testtier.Cluster, err == nil && built, fmt.Sprintf("the Kubernetes binaries are not built (%s %v): run scripts/ensure-kube.sh first", bin, err))

	hostPathsBefore := map[string]bool{}
	for _, p := range hostPaths {
		_, err := os.Lstat(p)
		hostPathsBefore[p] = err == nil
	}
	state := t.TempDir()
	busybox := filepath.Join(t.TempDir(), "busybox.tar")
	if err := WriteBusyboxImage(busybox); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	start := time.Now()
	// Other packages' cluster tests (the storage VM node's, e2e) may hold the machine.
	c, err := StartLocal(ctx, Options{StateDir: state, BinDir: bin, Images: []string{busybox}, Log: &log, WaitForMachine: 15 * time.Minute})
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster with a Ready node in %.1fs", time.Since(start).Seconds())
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop(context.Background())
		}
	}()
	defer func() {
		if t.Failed() {
			for _, n := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "containerd", "kubelet"} {
				t.Logf("--- the end of %s:\n%s", c.LogPath(n), tail(c.LogPath(n), 25))
			}
		}
	}()

	// A zone the lab has no machine for.
	fakeAdded := time.Now()
	if err := c.AddFakeNode(ctx, "lab-zone-b", map[string]string{"topology.switchyard.io/zone": "b"}, "switchyard.csi.io", []string{"topology.switchyard.io/zone"}); err != nil {
		t.Fatal(err)
	}

	t.Run("privileged pod with Bidirectional propagation", func(t *testing.T) {
		testBidirectionalPod(ctx, t, c)
	})
	t.Run("fake node", func(t *testing.T) {
		testFakeNode(ctx, t, c, fakeAdded)
	})

	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	if running := c.RunningProcesses(); len(running) > 0 {
		t.Errorf("still running after Stop: %v", running)
	}
	if m := mountsUnder(t, state); len(m) > 0 {
		t.Errorf("mounts left under the state dir: %v", m)
	}
	for _, dev := range []string{nodeVeth, cniBridge} {
		if _, err := os.Stat("/sys/class/net/" + dev); err == nil {
			t.Errorf("network device %s left behind", dev)
		}
	}
	if left, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods"); len(left) > 0 {
		t.Errorf("kubepods cgroups left behind: %v", left)
	}
	for p, existed := range hostPathsBefore {
		if _, err := os.Lstat(p); err == nil && !existed {
			t.Errorf("%s was made by the node and left behind", p)
		}
	}
	if _, err := os.Stat(ownerFile()); err == nil {
		t.Errorf("%s left behind: the next start would think a cluster runs", ownerFile())
	}
}

func testBidirectionalPod(ctx context.Context, t *testing.T, c *Local) {
	// The host side must be a shared mount for Bidirectional propagation,
	// as the kubelet's plugin and pod directories are.
	host := filepath.Join(c.StateDir(), "propagation")
	if err := os.MkdirAll(host, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(host, host, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Unmount(host, syscall.MNT_DETACH) }()
	if err := syscall.Mount("", host, "", syscall.MS_SHARED|syscall.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: propagation
  namespace: default
spec:
  nodeSelector:
    kubernetes.io/hostname: %s
  terminationGracePeriodSeconds: 1
  containers:
  - name: plugin
    image: %s
    imagePullPolicy: Never
    command:
    - /bin/busybox
    - sh
    - -c
    - |
      set -e
      /bin/busybox mkdir -p /host/sub
      /bin/busybox mount -t tmpfs lab-propagation /host/sub
      echo from-the-pod > /host/sub/marker
      if /bin/busybox nc -w 5 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT </dev/null; then echo apiserver-reachable; fi
      /bin/busybox cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo
      exec /bin/busybox sleep 3600
    securityContext:
      privileged: true
    volumeMounts:
    - name: host
      mountPath: /host
      mountPropagation: Bidirectional
  volumes:
  - name: host
    hostPath:
      path: %s
      type: Directory
`, HostNodeName, BusyboxImageName, host)
	// The default service account appears shortly after the controller
	// manager starts; until then the pod is refused.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := c.Kubectl(ctx, []byte(pod), "apply", "-f", "-")
		if err == nil {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "serviceaccount") {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	start := time.Now()
	if _, err := c.Kubectl(ctx, nil, "wait", "--for=condition=Ready", "pod/propagation", "--timeout=120s"); err != nil {
		desc, _ := c.Kubectl(ctx, nil, "describe", "pod", "propagation")
		t.Fatalf("%v\n%s", err, desc)
	}
	t.Logf("pod Running %.1fs after it was created", time.Since(start).Seconds())

	// The tmpfs the container mounted is visible on the host.
	var found bool
	for i := 0; i < 50 && !found; i++ {
		for _, m := range mountsUnder(t, host) {
			if m == filepath.Join(host, "sub") {
				found = true
			}
		}
		if !found {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !found {
		t.Fatalf("the pod's mount on %s/sub did not propagate to the host", host)
	}
	if b, err := os.ReadFile(filepath.Join(host, "sub", "marker")); err != nil || string(b) != "from-the-pod\n" {
		t.Errorf("marker through the propagated mount: %q, %v", b, err)
	}
	logs, err := c.Kubectl(ctx, nil, "logs", "propagation")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "apiserver-reachable") {
		t.Errorf("the pod did not reach the apiserver at the kubernetes service; its log:\n%s", logs)
	}
	if !strings.Contains(string(logs), "default") {
		t.Errorf("the pod has no service account token; its log:\n%s", logs)
	}
	if _, err := c.Kubectl(ctx, nil, "delete", "pod", "propagation", "--wait=true", "--timeout=60s"); err != nil {
		t.Error(err)
	}
	_ = syscall.Unmount(filepath.Join(host, "sub"), syscall.MNT_DETACH)
}

func testFakeNode(ctx context.Context, t *testing.T, c *Local, added time.Time) {
	out, err := c.Kubectl(ctx, nil, "get", "csinode", "lab-zone-b", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var csiNode struct {
		Spec struct {
			Drivers []struct {
				Name         string   `json:"name"`
				NodeID       string   `json:"nodeID"`
				TopologyKeys []string `json:"topologyKeys"`
			} `json:"drivers"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &csiNode); err != nil {
		t.Fatal(err)
	}
	if d := csiNode.Spec.Drivers; len(d) != 1 || d[0].Name != "switchyard.csi.io" || d[0].NodeID != "lab-zone-b" || len(d[0].TopologyKeys) != 1 {
		t.Errorf("CSINode drivers = %+v", d)
	}
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: in-zone-b
  namespace: default
spec:
  nodeSelector:
    topology.switchyard.io/zone: b
  automountServiceAccountToken: false
  containers:
  - name: c
    image: ` + BusyboxImageName + `
    imagePullPolicy: Never
`
	if _, err := c.Kubectl(ctx, []byte(pod), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	var bound string
	for i := 0; i < 60 && bound == ""; i++ {
		b, _ := c.Kubectl(ctx, nil, "get", "pod", "in-zone-b", "-o", "jsonpath={.spec.nodeName}")
		bound = string(b)
		if bound == "" {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if bound != "lab-zone-b" {
		t.Errorf("the scheduler bound the zone-b pod to %q, want lab-zone-b", bound)
	}
	// Past node-monitor-grace-period (50 s) the node lifecycle controller
	// would have marked a node without lease renewals NotReady.
	if wait := 60*time.Second - time.Since(added); wait > 0 {
		time.Sleep(wait)
	}
	ready, why, err := c.NodeReady(ctx, "lab-zone-b")
	if err != nil || !ready {
		t.Errorf("fake node not Ready after 60 s: %s %v", why, err)
	}
	taints, _ := c.Kubectl(ctx, nil, "get", "node", "lab-zone-b", "-o", "jsonpath={.spec.taints}")
	if len(taints) > 0 {
		t.Errorf("fake node tainted: %s", taints)
	}
	if err := c.RemoveFakeNode(ctx, "lab-zone-b"); err != nil {
		t.Error(err)
	}
	_, _ = c.Kubectl(ctx, nil, "delete", "pod", "in-zone-b", "--force", "--grace-period=0")
	if _, err := c.Kubectl(ctx, nil, "get", "node", "lab-zone-b"); err == nil {
		t.Error("RemoveFakeNode left the Node")
	}
}

// mountsUnder lists mount points at or below dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 {
			mp := unescapeMount(fs[4])
			if mp == dir || strings.HasPrefix(mp, dir+"/") {
				out = append(out, mp)
			}
		}
	}
	return out
}
