// Package chart_test checks the Helm chart with the real helm binary:
// `helm lint`, `helm template` against golden files (go test -update
// rewrites them), the values schema's refusals, and the properties that make
// the chart a CSI driver deployment (node plugin shape, sidecar flags,
// democratic-csi compatibility).
//
// helm comes from scripts/ensure-helm.sh (bin/tools/helm; HELM overrides).
// Without it the tests skip as tier "chart" (LAB_REQUIRE=chart or all makes
// that a failure).
package chart_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current chart")

const release, namespace = "sy", "storage"

// kubeVersion is what `helm template` and `helm lint` assume: a helm built
// with go install (scripts/ensure-helm.sh) would otherwise assume v1.20,
// older than the chart's kubeVersion, and the golden files must not depend
// on how helm was built.
const kubeVersion = "v1.37.0"

// helmBin finds helm: $HELM, the repository's bin/tools/helm, then PATH.
func helmBin(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if h := filepath.Join(root, "bin", "tools", "helm"); isExec(h) {
		return h
	}
	h, err := exec.LookPath("helm")
	testtier.Need(t, testtier.Chart, err == nil, "no helm binary: run scripts/ensure-helm.sh (installs bin/tools/helm) or set HELM")
	return h
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// helm runs helm with its state kept in a temporary home, so the user's
// repositories and plugins play no part.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin(t), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func render(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helm(t, append([]string{"template", release, ".", "--namespace", namespace, "--kube-version", kubeVersion}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func valueFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/values/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/values/*.yaml: %v", err)
	}
	return files
}

func TestLint(t *testing.T) {
	for _, f := range valueFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if out, err := helm(t, "lint", ".", "--strict", "--namespace", namespace, "--kube-version", kubeVersion, "-f", f); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// TestGolden renders every values file and compares with testdata/golden.
// A difference is either a bug or an intended change: rerun with -update and
// read the diff.
func TestGolden(t *testing.T) {
	for _, f := range valueFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			got := render(t, "-f", f)
			golden := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("helm template -f %s differs from %s (go test -update rewrites it):\n%s", f, golden, firstDiff(string(want), got))
			}
		})
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(equal)"
}

// TestBadValues: what a user gets wrong is refused before anything reaches the cluster, with a message naming the key.
func TestBadValues(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"no-name.yaml", []string{"csiDriver", "name"}},
		{"no-connections.yaml", []string{"connections"}},
		{"connection-not-yaml.yaml", []string{"a.yml"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			out, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", filepath.Join("testdata", "bad", c.file))
			if err == nil {
				t.Fatalf("rendered without error:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q: %v", w, err)
				}
			}
			t.Logf("message: %v", err)
		})
	}
	t.Run("driverName instead of csiDriver.name", func(t *testing.T) {
		all := docs(t, render(t, "-f", "testdata/bad/no-name.yaml", "--set", "driverName=org.example.other"))
		if n := get(find(t, all, "CSIDriver", "org.example.other"), "metadata", "name"); n != "org.example.other" {
			t.Errorf("CSIDriver %v", n)
		}
		if !has(strs(container(t, find(t, all, "DaemonSet", "-node"), "csi-node-driver-registrar")["args"]),
			"--kubelet-registration-path=/var/lib/kubelet/plugins/org.example.other/csi.sock") {
			t.Error("the registrar does not register under driverName")
		}
	})
	t.Run("csiDriver.name and driverName differ", func(t *testing.T) {
		_, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/minimal.yaml", "--set", "driverName=org.example.other")
		if err == nil || !strings.Contains(err.Error(), "differ") {
			t.Errorf("got %v, want the two names refused", err)
		}
	})
	t.Run("existingSecret instead of connections", func(t *testing.T) {
		render(t, "--set", "csiDriver.name=a.b", "--set", "existingSecret=conns")
	})
	t.Run("standalone driver needs no connections", func(t *testing.T) {
		render(t, "--set", "csiDriver.name=a.b", "--set", "driver.config.driver=local-hostpath")
	})
}

// --- rendered objects ---------------------------------------------------------

type obj = map[string]any

func docs(t *testing.T, manifest string) []obj {
	t.Helper()
	var out []obj
	for _, d := range strings.Split(manifest, "\n---\n") {
		var o obj
		if err := yaml.Unmarshal([]byte(d), &o); err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, d)
		}
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

func find(t *testing.T, all []obj, kind, nameSuffix string) obj {
	t.Helper()
	for _, o := range all {
		if o["kind"] == kind && strings.HasSuffix(get(o, "metadata", "name").(string), nameSuffix) {
			return o
		}
	}
	t.Fatalf("no %s named *%s rendered", kind, nameSuffix)
	return nil
}

// get walks maps by key and lists by index (an int).
func get(o any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := o.(obj)
			if !ok {
				return nil
			}
			o = m[k]
		case int:
			l, ok := o.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			o = l[k]
		}
	}
	return o
}

func container(t *testing.T, workload obj, name string) obj {
	t.Helper()
	for _, c := range get(workload, "spec", "template", "spec", "containers").([]any) {
		if c.(obj)["name"] == name {
			return c.(obj)
		}
	}
	t.Fatalf("%s has no container %s", get(workload, "metadata", "name"), name)
	return nil
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func mountOf(c obj, name string) obj {
	for _, m := range c["volumeMounts"].([]any) {
		if m.(obj)["name"] == name {
			return m.(obj)
		}
	}
	return nil
}

func volumeOf(workload obj, name string) obj {
	for _, v := range get(workload, "spec", "template", "spec", "volumes").([]any) {
		if v.(obj)["name"] == name {
			return v.(obj)
		}
	}
	return nil
}

// TestNodePlugin: the node DaemonSet is what a CSI node plugin must be.
func TestNodePlugin(t *testing.T) {
	for _, kd := range []struct{ set, want string }{
		{"", "/var/lib/kubelet"},
		{"kubeletDir=/var/snap/microk8s/common/var/lib/kubelet", "/var/snap/microk8s/common/var/lib/kubelet"},
		{"node.kubeletHostPath=/var/lib/k0s/kubelet", "/var/lib/k0s/kubelet"},
	} {
		t.Run(kd.want, func(t *testing.T) {
			args := []string{"-f", "testdata/values/minimal.yaml"}
			if kd.set != "" {
				args = append(args, "--set", kd.set)
			}
			ds := find(t, docs(t, render(t, args...)), "DaemonSet", "-node")
			spec := get(ds, "spec", "template", "spec").(obj)
			if spec["hostNetwork"] != true || spec["priorityClassName"] != "system-node-critical" {
				t.Errorf("node pods: hostNetwork=%v priorityClassName=%v; want true, system-node-critical", spec["hostNetwork"], spec["priorityClassName"])
			}
			sy := container(t, ds, "switchyard")
			if get(sy, "securityContext", "privileged") != true {
				t.Error("the node container is not privileged")
			}
			km := mountOf(sy, "kubelet-dir")
			if km == nil || km["mountPath"] != kd.want || km["mountPropagation"] != "Bidirectional" {
				t.Errorf("kubelet dir mount = %v; want %s with Bidirectional propagation", km, kd.want)
			}
			if p := get(volumeOf(ds, "kubelet-dir"), "hostPath", "path"); p != kd.want {
				t.Errorf("kubelet dir hostPath = %v, want %s", p, kd.want)
			}
			if p := get(volumeOf(ds, "socket-dir"), "hostPath", "path"); p != kd.want+"/plugins/org.democratic-csi.proxy" {
				t.Errorf("socket dir = %v, want the kubelet's plugins/<driver name>", p)
			}
			if p := get(volumeOf(ds, "registration-dir"), "hostPath", "path"); p != kd.want+"/plugins_registry" {
				t.Errorf("registration dir = %v", p)
			}
			reg := strs(container(t, ds, "csi-node-driver-registrar")["args"])
			if !has(reg, "--kubelet-registration-path="+kd.want+"/plugins/org.democratic-csi.proxy/csi.sock") {
				t.Errorf("registrar args %v lack the registration path under %s", reg, kd.want)
			}
			args2 := strs(sy["args"])
			for _, want := range []string{"--csi-mode=node", "--csi-name=org.democratic-csi.proxy", "--server-socket=/csi-data/csi.sock", "--node-state-dir=/var/lib/switchyard/node"} {
				if !has(args2, want) {
					t.Errorf("node args %v lack %s", args2, want)
				}
			}
			for _, m := range []string{"dev", "sys", "iscsi-dir", "nvme-dir", "node-state"} {
				if mountOf(sy, m) == nil {
					t.Errorf("node container lacks the %s mount", m)
				}
			}
		})
	}
}

// TestControllerSidecars: the Deployment's sidecars and their flags.
func TestControllerSidecars(t *testing.T) {
	all := docs(t, render(t, "-f", "testdata/values/minimal.yaml"))
	d := find(t, all, "Deployment", "-controller")
	prov := strs(container(t, d, "csi-provisioner")["args"])
	for _, want := range []string{"--feature-gates=Topology=true", "--strict-topology=false", "--immediate-topology=true", "--extra-create-metadata", "--leader-election", "--csi-address=/csi-data/csi.sock", "--leader-election-namespace=" + namespace} {
		if !has(prov, want) {
			t.Errorf("provisioner args %v lack %s", prov, want)
		}
	}
	for _, c := range []string{"switchyard", "csi-resizer", "csi-snapshotter", "liveness-probe"} {
		container(t, d, c)
	}
	for _, c := range get(d, "spec", "template", "spec", "containers").([]any) {
		if c.(obj)["name"] == "csi-attacher" {
			t.Error("csi-attacher runs although csiDriver.attachRequired is false")
		}
	}
	sy := container(t, d, "switchyard")
	if !has(strs(sy["args"]), "--csi-mode=controller") {
		t.Errorf("controller args %v", sy["args"])
	}
	if m := mountOf(sy, "connections"); m == nil || m["mountPath"] != "/mnt/connections" {
		t.Errorf("connections mount = %v", m)
	}
	cfg := find(t, all, "Secret", "-driver-config")
	var main obj
	if err := yaml.Unmarshal([]byte(get(cfg, "stringData", "driver-config-file.yaml").(string)), &main); err != nil {
		t.Fatal(err)
	}
	if main["driver"] != "proxy" || get(main, "proxy", "configFolder") != "/mnt/connections" {
		t.Errorf("main config = %v; want driver: proxy with proxy.configFolder /mnt/connections", main)
	}
	conns := find(t, all, "Secret", "-connections")
	var fast obj
	if err := yaml.Unmarshal([]byte(get(conns, "stringData", "fast.yaml").(string)), &fast); err != nil {
		t.Fatal(err)
	}
	if fast["driver"] != "local-hostpath" || get(fast, "local-hostpath", "shareBasePath") != "/var/lib/csi-local-hostpath/fast" {
		t.Errorf("fast.yaml in the Secret = %v", fast)
	}
	sc := find(t, all, "StorageClass", "fast")
	if sc["provisioner"] != "org.democratic-csi.proxy" || get(sc, "parameters", "connection") != "fast" {
		t.Errorf("StorageClass = %v", sc)
	}
	drv := find(t, all, "CSIDriver", "org.democratic-csi.proxy")
	if get(drv, "spec", "fsGroupPolicy") != "File" || get(drv, "spec", "podInfoOnMount") != true || get(drv, "spec", "attachRequired") != false {
		t.Errorf("CSIDriver spec = %v", drv["spec"])
	}

	withAttacher := docs(t, render(t, "-f", "testdata/values/minimal.yaml", "--set", "csiDriver.attachRequired=true"))
	container(t, find(t, withAttacher, "Deployment", "-controller"), "csi-attacher")
}

// TestNodeStrategy: controller.strategy=node puts the controller in the node
// pods (local-hostpath), with per-node provisioning and no Deployment.
func TestNodeStrategy(t *testing.T) {
	all := docs(t, render(t, "-f", "testdata/values/node-strategy.yaml"))
	for _, o := range all {
		if o["kind"] == "Deployment" {
			t.Fatalf("strategy node still renders a Deployment: %v", get(o, "metadata", "name"))
		}
	}
	ds := find(t, all, "DaemonSet", "-node")
	sy := strs(container(t, ds, "switchyard")["args"])
	if !has(sy, "--csi-mode=controller") || !has(sy, "--csi-mode=node") {
		t.Errorf("node container args %v; want both modes", sy)
	}
	prov := strs(container(t, ds, "csi-provisioner")["args"])
	if !has(prov, "--node-deployment=true") || has(prov, "--leader-election") {
		t.Errorf("provisioner args %v; want --node-deployment=true without leader election", prov)
	}
	if mountOf(container(t, ds, "switchyard"), "connections") == nil {
		t.Error("the node container lacks the connections mount")
	}
	binding := find(t, all, "ClusterRoleBinding", "-controller")
	if get(binding, "subjects", 0, "name") != release+"-switchyard-node" {
		t.Errorf("controller role bound to %v, want the node service account", get(binding, "subjects", 0, "name"))
	}
}

// TestLabImages: imagePullPolicy Never reaches every container, and local image names are used as given.
func TestLabImages(t *testing.T) {
	all := docs(t, render(t, "-f", "testdata/values/lab.yaml"))
	n := 0
	for _, o := range all {
		if o["kind"] != "Deployment" && o["kind"] != "DaemonSet" {
			continue
		}
		for _, c := range get(o, "spec", "template", "spec", "containers").([]any) {
			n++
			if p := c.(obj)["imagePullPolicy"]; p != "Never" {
				t.Errorf("%s/%s: imagePullPolicy %v", get(o, "metadata", "name"), c.(obj)["name"], p)
			}
		}
	}
	if n < 7 {
		t.Errorf("only %d containers rendered", n)
	}
	if img := container(t, find(t, all, "DaemonSet", "-node"), "switchyard")["image"]; img != "switchyard-node:0123abc" {
		t.Errorf("node image %v", img)
	}
	if img := container(t, find(t, all, "Deployment", "-controller"), "switchyard")["image"]; img != "switchyard-controller:0123abc" {
		t.Errorf("controller image %v", img)
	}
}

// TestDemocraticCSIValues: a democratic-csi proxy values file installs with
// only the driver name and the images changed, and means the same thing:
// the connections Secret mounted where its main config says, the topology
// flags of its guide winning over the chart's defaults.
func TestDemocraticCSIValues(t *testing.T) {
	all := docs(t, render(t, "-f", "testdata/values/democratic-csi-proxy.yaml",
		"--set", "csiDriver.name=org.switchyard.proxy",
		"--set", "controller.driver.image.registry=ghcr.io/switchyard-csi/switchyard-controller",
		"--set", "controller.driver.image.tag=0.1.0",
		"--set", "node.driver.image.registry=ghcr.io/switchyard-csi/switchyard-node",
		"--set", "node.driver.image.tag=0.1.0"))
	d := find(t, all, "Deployment", "-controller")
	sy := container(t, d, "switchyard")
	if m := mountOf(sy, "connections"); m == nil || m["mountPath"] != "/mnt/connections" {
		t.Errorf("democratic-csi's extraVolumeMounts not applied: %v", sy["volumeMounts"])
	}
	if v := volumeOf(d, "connections"); get(v, "secret", "secretName") != "connections" {
		t.Errorf("democratic-csi's extraVolumes not applied: %v", v)
	}
	var main obj
	cfg := find(t, all, "Secret", "-driver-config")
	if err := yaml.Unmarshal([]byte(get(cfg, "stringData", "driver-config-file.yaml").(string)), &main); err != nil {
		t.Fatal(err)
	}
	if main["driver"] != "proxy" || get(main, "proxy", "configFolder") != "/mnt/connections/" {
		t.Errorf("main config %v is not democratic-csi's", main)
	}
	prov := strs(container(t, d, "csi-provisioner")["args"])
	// The user's topology flags replace the chart's: each appears once, with the user's value.
	for _, want := range []string{"--feature-gates=Topology=true", "--strict-topology=true", "--immediate-topology=false"} {
		flagName := strings.SplitN(want, "=", 2)[0]
		n := 0
		for _, a := range prov {
			if strings.HasPrefix(a, flagName+"=") {
				n++
			}
		}
		if !has(prov, want) || n != 1 {
			t.Errorf("provisioner args %v: want %s exactly once", prov, want)
		}
	}
	var classes []string
	for _, o := range all {
		if o["kind"] == "StorageClass" {
			classes = append(classes, fmt.Sprintf("%s->%s", get(o, "metadata", "name"), get(o, "parameters", "connection")))
			if o["provisioner"] != "org.switchyard.proxy" {
				t.Errorf("StorageClass %v provisioner %v", get(o, "metadata", "name"), o["provisioner"])
			}
		}
	}
	sort.Strings(classes)
	if strings.Join(classes, ",") != "iscsi->example-iscsi,nfs->example-nfs" {
		t.Errorf("StorageClasses %v", classes)
	}
	ds := find(t, all, "DaemonSet", "-node")
	if env := container(t, ds, "switchyard")["env"]; !strings.Contains(fmt.Sprint(env), "ISCSIADM_HOST_STRATEGY") {
		t.Errorf("node extraEnv not applied: %v", env)
	}
}

// TestSideBySide: two releases with different driver names share nothing a
// node or the cluster would mix up.
func TestSideBySide(t *testing.T) {
	a := docs(t, render(t, "-f", "testdata/values/minimal.yaml"))
	out, err := helm(t, "template", "other", ".", "--namespace", namespace, "--kube-version", kubeVersion, "-f", "testdata/values/minimal.yaml", "--set", "csiDriver.name=org.example.second")
	if err != nil {
		t.Fatal(err)
	}
	b := docs(t, out)
	names := map[string]bool{}
	for _, o := range a {
		names[fmt.Sprint(o["kind"], "/", get(o, "metadata", "name"))] = true
	}
	for _, o := range b {
		if k := fmt.Sprint(o["kind"], "/", get(o, "metadata", "name")); names[k] && o["kind"] != "StorageClass" {
			t.Errorf("both releases render %s", k)
		}
	}
	pa := container(t, find(t, a, "DaemonSet", "-node"), "liveness-probe")["args"]
	pb := container(t, find(t, b, "DaemonSet", "-node"), "liveness-probe")["args"]
	if fmt.Sprint(pa) == fmt.Sprint(pb) {
		t.Errorf("both node plugins' health ports are the same on the host network: %v", pa)
	}
}

// portsOf maps a container's port names to their numbers.
func portsOf(c obj) map[string]int {
	out := map[string]int{}
	for _, p := range get(c, "ports").([]any) {
		out[fmt.Sprint(p.(obj)["name"])] = p.(obj)["containerPort"].(int)
	}
	return out
}

// TestMetrics: every endpoint that metrics values turn on listens where the
// Services and the ServiceMonitor look for it, and nothing of it renders
// when they are off.
func TestMetrics(t *testing.T) {
	all := docs(t, render(t, "-f", "testdata/values/metrics.yaml"))
	d := find(t, all, "Deployment", "-controller")
	sy := container(t, d, "switchyard")
	if !has(strs(sy["args"]), "--metrics-address=:9809") {
		t.Errorf("controller args %v lack --metrics-address=:9809", sy["args"])
	}
	// Every listener of the controller pod, by port name; all distinct.
	listen := portsOf(sy)
	for side, name := range map[string]string{"csi-provisioner": "metrics-prov", "csi-attacher": "metrics-attach", "csi-resizer": "metrics-resize", "csi-snapshotter": "metrics-snap"} {
		c := container(t, d, side)
		p := portsOf(c)[name]
		if p == 0 || !has(strs(c["args"]), fmt.Sprintf("--http-endpoint=:%d", p)) {
			t.Errorf("%s: port %s=%d, args %v; want --http-endpoint on that port", side, name, p, c["args"])
		}
		listen[name] = p
	}
	byPort := map[int]string{}
	for n, p := range listen {
		if o, dup := byPort[p]; dup {
			t.Errorf("ports %s and %s are both %d", o, n, p)
		}
		byPort[p] = n
	}
	if listen["healthz"] != 9808 || listen["metrics"] != 9809 {
		t.Errorf("controller ports %v; want healthz 9808, metrics 9809", listen)
	}

	svc := find(t, all, "Service", "-controller-metrics")
	sel := get(svc, "spec", "selector").(obj)
	for k, v := range get(d, "spec", "selector", "matchLabels").(obj) {
		if sel[k] != v {
			t.Errorf("controller metrics Service selector %v does not select the controller pods (%s=%v)", sel, k, v)
		}
	}
	svcPorts := map[string]bool{}
	for _, p := range get(svc, "spec", "ports").([]any) {
		name := fmt.Sprint(p.(obj)["targetPort"])
		svcPorts[name] = true
		if _, ok := listen[name]; !ok || name == "healthz" {
			t.Errorf("Service port %v targets no metrics port of the pod", p)
		}
	}
	if len(svcPorts) != 5 {
		t.Errorf("controller metrics Service ports %v; want the driver's and four sidecars'", svcPorts)
	}

	ds := find(t, all, "DaemonSet", "-node")
	nsy := container(t, ds, "switchyard")
	if np := portsOf(nsy); np["metrics"] != 9814 || np["healthz"] == 9814 || !has(strs(nsy["args"]), "--metrics-address=:9814") {
		t.Errorf("node container ports %v args %v; want metrics on 9814, apart from healthz", np, nsy["args"])
	}
	nsvc := find(t, all, "Service", "-node-metrics")
	if get(nsvc, "spec", "clusterIP") != "None" || get(nsvc, "spec", "selector", "app.kubernetes.io/component") != "node" {
		t.Errorf("node metrics Service spec %v; want headless, selecting the node pods", nsvc["spec"])
	}

	sm := find(t, all, "ServiceMonitor", "-switchyard")
	if sm["apiVersion"] != "monitoring.coreos.com/v1" || get(sm, "metadata", "labels", "release") != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor %v", sm["metadata"])
	}
	for k, v := range get(sm, "spec", "selector", "matchLabels").(obj) {
		for _, s := range []obj{svc, nsvc} {
			if get(s, "metadata", "labels", k) != v {
				t.Errorf("ServiceMonitor selects %s=%v, which Service %v lacks", k, v, get(s, "metadata", "name"))
			}
		}
	}
	var eps []string
	for _, e := range get(sm, "spec", "endpoints").([]any) {
		eps = append(eps, fmt.Sprint(e.(obj)["port"]))
		if e.(obj)["interval"] != "15s" || e.(obj)["scrapeTimeout"] != "10s" || e.(obj)["path"] != "/metrics" {
			t.Errorf("endpoint %v", e)
		}
	}
	sort.Strings(eps)
	if strings.Join(eps, ",") != "metrics,metrics-attach,metrics-prov,metrics-resize,metrics-snap" {
		t.Errorf("ServiceMonitor endpoints %v", eps)
	}

	t.Run("off by default", func(t *testing.T) {
		off := docs(t, render(t, "-f", "testdata/values/minimal.yaml", "--set", "metrics.serviceMonitor.enabled=true"))
		for _, o := range off {
			if o["kind"] == "Service" || o["kind"] == "ServiceMonitor" {
				t.Errorf("metrics off renders %s %v", o["kind"], get(o, "metadata", "name"))
			}
			if o["kind"] == "Deployment" || o["kind"] == "DaemonSet" {
				for _, c := range get(o, "spec", "template", "spec", "containers").([]any) {
					if a := fmt.Sprint(c.(obj)["args"]); strings.Contains(a, "--metrics-address") || strings.Contains(a, "--http-endpoint") {
						t.Errorf("metrics off, yet %s has %s", c.(obj)["name"], a)
					}
				}
			}
		}
	})
	t.Run("strategy node: no controller Service, no sidecar endpoints", func(t *testing.T) {
		n := docs(t, render(t, "-f", "testdata/values/node-strategy.yaml", "--set", "metrics.enabled=true,metrics.sidecars.enabled=true"))
		for _, o := range n {
			if o["kind"] == "Service" {
				t.Errorf("renders %v, which would select no pod", get(o, "metadata", "name"))
			}
		}
		if a := fmt.Sprint(container(t, find(t, n, "DaemonSet", "-node"), "csi-provisioner")["args"]); strings.Contains(a, "--http-endpoint") {
			t.Errorf("the per-node provisioner on the host network got %s", a)
		}
	})
}

// TestMetricsPortClashes: two listeners of one pod on one port are refused
// at render time, naming both, instead of a container that cannot start.
func TestMetricsPortClashes(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"metrics.enabled=true,metrics.port=9808", "health port"},
		{"metrics.enabled=true,metrics.sidecars.enabled=true,metrics.sidecars.ports.resizer=9809", "metrics.sidecars.ports.resizer"},
		{"node.metrics.enabled=true,node.livenessProbe.port=9814", "node.metrics.port"},
		{"metrics.port=0", "minimum"},
		{"metrics.serviceMonitor.interval=soon", "interval"},
		{"metrics.sidecar.enabled=true", "sidecar"},
	} {
		t.Run(c.set, func(t *testing.T) {
			_, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/minimal.yaml", "--set", c.set)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}
