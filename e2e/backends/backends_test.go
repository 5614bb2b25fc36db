package backends

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sampleLab has every host, at addresses nothing listens on: rendering
// and config checks need no running simulator.
func sampleLab() *Lab {
	return &Lab{
		ZFS:     &ZFSHost{SSH: "127.0.0.1:2222", User: "root", Password: "pw"},
		TrueNAS: &TrueNASHost{URL: "http://127.0.0.1:8080", APIKey: "1-" + strings.Repeat("a", 64)},
		Infinia: &InfiniaHost{URL: "https://127.0.0.1:8443", Account: "clu1/red/csiAccount", Password: "pw", Service: "red/csiService"},
	}
}

func TestTableNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Families() {
		for _, k := range []string{f.Name, "short:" + f.Short} {
			if seen[k] {
				t.Errorf("%s appears twice in the table", k)
			}
			seen[k] = true
		}
		if !f.Filesystem && !f.Block {
			t.Errorf("%s serves neither Filesystem nor Block", f.Name)
		}
		if f.Block && f.FSType == "" {
			t.Errorf("%s is block storage but has no fstype for its filesystem volumes", f.Name)
		}
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "local-hostpath") {
		t.Errorf("Lookup of an unknown family: %v; want the list of names", err)
	}
}

func TestLoadLab(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"vmNode":"vm","zfs":{"ssh":"127.0.0.1:2222","user":"root","password":"x"}}`), 0o600)
	l, err := LoadLab(good)
	if err != nil || l.ZFS == nil || l.VMNode != "vm" {
		t.Fatalf("LoadLab: %+v %v", l, err)
	}
	for name, body := range map[string]string{
		"typo":    `{"zfss":{}}`,
		"zfs":     `{"zfs":{"ssh":"nohostport","user":"root","password":"x"}}`,
		"infinia": `{"infinia":{"url":"https://x","account":"a/b","password":"p","service":"s/v"}}`,
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := LoadLab(p); err == nil {
			t.Errorf("%s: %s was accepted", name, body)
		}
	}
	if l, err := LoadLab(""); err != nil || l.ZFS != nil {
		t.Errorf("no lab file: %+v %v; want an empty lab", l, err)
	}
}

// switchyard returns the driver binary: E2E_SWITCHYARD_BIN, else one
// built from the parent module.
func switchyard(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("E2E_SWITCHYARD_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "switchyard")
	out, err := exec.Command("go", "-C", "../..", "build", "-o", bin, "./cmd/switchyard").CombinedOutput()
	if err != nil {
		t.Fatalf("building switchyard: %v\n%s", err, out)
	}
	return bin
}

// Every row's connection file passes `switchyard config check`: a row
// that renders a file the driver refuses would fail every spec of it in
// the cluster, much later and less clearly.
func TestEveryRowRendersAConnectionTheDriverAccepts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the driver")
	}
	bin := switchyard(t)
	dir := t.TempDir()
	conns := filepath.Join(dir, "connections")
	os.MkdirAll(conns, 0o755)
	main := filepath.Join(dir, "main.yaml")
	os.WriteFile(main, []byte("driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n  nodeId:\n    parts:\n      nodeName: true\n      nqn: true\n"), 0o600)
	env := &Env{Lab: sampleLab(), HostPathBase: "/var/lib/csi-local-hostpath", HostPathHostBase: "/var/lib/csi-local-hostpath"}
	for _, f := range Families() {
		os.WriteFile(filepath.Join(conns, "e2e-"+f.Short+".yaml"), []byte(f.Connection(env, "e2e-"+f.Short)), 0o600)
	}
	out, err := exec.Command(bin, "config", "check", main).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "warning:") && !strings.HasSuffix(l, ": ok") {
			t.Errorf("config check: %s", l)
		}
	}
	if err != nil {
		t.Fatalf("config check failed: %v\n%s", err, out)
	}
}
