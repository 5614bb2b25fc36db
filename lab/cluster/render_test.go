package cluster

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

type kubeconfigFile struct {
	Clusters []struct {
		Cluster struct {
			Server string `yaml:"server"`
			CA     string `yaml:"certificate-authority-data"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Cert string `yaml:"client-certificate-data"`
			Key  string `yaml:"client-key-data"`
		} `yaml:"user"`
	} `yaml:"users"`
	CurrentContext string `yaml:"current-context"`
}

func TestWriteNodeFiles(t *testing.T) {
	c, err := newLocal(Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "vm")
	if err := c.WriteNodeFiles(dir, "lab-vm", "10.0.2.15", "https://10.0.2.100:6443", KubeletOptions{CgroupDriver: "systemd", NoControllerAttachDetach: true}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	var kc kubeconfigFile
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		t.Fatalf("kubeconfig is not YAML: %v\n%s", err, raw)
	}
	if len(kc.Clusters) != 1 || kc.Clusters[0].Cluster.Server != "https://10.0.2.100:6443" || kc.CurrentContext != "switchyard-lab" {
		t.Fatalf("kubeconfig = %+v", kc)
	}
	certPEM, _ := base64.StdEncoding.DecodeString(kc.Users[0].User.Cert)
	keyPEM, _ := base64.StdEncoding.DecodeString(kc.Users[0].User.Key)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("the kubeconfig's client certificate and key do not match: %v", err)
	}
	if pair.Leaf.Subject.CommonName != "system:node:lab-vm" {
		t.Errorf("node kubeconfig authenticates as %q", pair.Leaf.Subject.CommonName)
	}
	if st, _ := os.Stat(filepath.Join(dir, "kubeconfig")); st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v: it holds a private key", st.Mode().Perm())
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if string(ca) != string(c.CACertPEM()) {
		t.Error("ca.crt is not the cluster CA")
	}

	var kcfg map[string]any
	raw, _ = os.ReadFile(filepath.Join(dir, "kubelet-config.yaml"))
	if err := yaml.Unmarshal(raw, &kcfg); err != nil {
		t.Fatalf("kubelet-config.yaml: %v", err)
	}
	want := map[string]any{
		"kind": "KubeletConfiguration", "cgroupDriver": "systemd", "failCgroupV1": false, "failSwapOn": false,
		"enableControllerAttachDetach": false, "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock",
		"port": 10250, "readOnlyPort": 0,
	}
	for k, v := range want {
		if kcfg[k] != v {
			t.Errorf("kubelet-config %s = %v, want %v", k, kcfg[k], v)
		}
	}
	x509 := kcfg["authentication"].(map[string]any)["x509"].(map[string]any)
	if x509["clientCAFile"] != "ca.crt" {
		t.Errorf("clientCAFile = %v, want the relative ca.crt (the VM reads the dir at another path)", x509["clientCAFile"])
	}
	args, _ := os.ReadFile(filepath.Join(dir, "kubelet.args"))
	for _, a := range []string{"--hostname-override=lab-vm", "--node-ip=10.0.2.15", "--kubeconfig=kubeconfig", "--config=kubelet-config.yaml"} {
		if !strings.Contains(string(args), a+"\n") {
			t.Errorf("kubelet.args lacks %s:\n%s", a, args)
		}
	}
	if err := c.WriteNodeFiles(dir, "x", "not-an-ip", "https://x", KubeletOptions{}); err == nil {
		t.Error("a node IP that is no address was accepted")
	}
}

func TestKubeletConfigDefaultsAreTheHostNodes(t *testing.T) {
	var kcfg map[string]any
	if err := yaml.Unmarshal([]byte(kubeletConfig(KubeletOptions{})), &kcfg); err != nil {
		t.Fatal(err)
	}
	if kcfg["cgroupDriver"] != "cgroupfs" || kcfg["enableControllerAttachDetach"] != true || kcfg["podLogsDir"] != "/var/log/pods" {
		t.Errorf("defaults: %v", kcfg)
	}
	eh := kcfg["evictionHard"].(map[string]any)
	if eh["nodefs.available"] != "1%" {
		t.Errorf("evictionHard = %v (a %%%% in the template?)", eh)
	}
}

func TestContainerdConfigKeepsEverythingInTheStateDir(t *testing.T) {
	cfg := containerdConfig("/st", "switchyard.local/lab/pause:1")
	for _, want := range []string{
		`root = "/st/containerd/root"`, `state = "/st/containerd/state"`, `address = "/st/containerd/containerd.sock"`,
		`restrict_oom_score_adj = true`, `sandbox_image = "switchyard.local/lab/pause:1"`, `conf_dir = "/st/cni/net.d"`,
		`SystemdCgroup = false`,
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("containerd config lacks %s", want)
		}
	}
	if strings.Contains(cfg, "/run/containerd") || strings.Contains(cfg, "/var/lib/containerd") {
		t.Error("containerd config names a system path")
	}
}

func TestCNIConfig(t *testing.T) {
	var conf struct {
		CNIVersion string `json:"cniVersion"`
		Plugins    []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPAM   struct {
				Type    string `json:"type"`
				DataDir string `json:"dataDir"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(cniConfig("/st")), &conf); err != nil {
		t.Fatalf("CNI config is not JSON: %v", err)
	}
	p := conf.Plugins[0]
	if p.Type != "bridge" || p.Bridge != cniBridge || p.IPAM.Type != "host-local" || p.IPAM.DataDir != "/st/cni/networks" {
		t.Errorf("CNI config = %+v", conf)
	}
}

func TestControlPlaneArgs(t *testing.T) {
	joined := strings.Join(apiserverArgs("/b", "/st"), " ")
	for _, want := range []string{"--allow-privileged=true", "--authorization-mode=Node,RBAC", "--service-cluster-ip-range=" + ServiceCIDR,
		"--service-account-signing-key-file=/st/pki/sa.key", "--secure-port=16443", "--bind-address=127.0.0.1", "--enable-admission-plugins=NodeRestriction"} {
		if !strings.Contains(joined, want) {
			t.Errorf("apiserver args lack %s", want)
		}
	}
	joined = strings.Join(controllerManagerArgs("/b", "/st"), " ")
	for _, want := range []string{"--controllers=*", "--use-service-account-credentials=true", "--service-account-private-key-file=/st/pki/sa.key"} {
		if !strings.Contains(joined, want) {
			t.Errorf("controller-manager args lack %s", want)
		}
	}
	if a := etcdArgs("/st"); !strings.Contains(strings.Join(a, " "), "--listen-client-urls=http://127.0.0.1:23791") {
		t.Errorf("etcd args: %v", a)
	}
}
