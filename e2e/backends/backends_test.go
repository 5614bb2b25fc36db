package backends

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/e2e/internal/driverbin"
)

// sampleLab has every host, at addresses nothing listens on: rendering
// and config checks need no running simulator.
func sampleLab() *Lab {
	return &Lab{
		ZFS:      &ZFSHost{SSH: "127.0.0.1:2222", User: "root", Password: "pw"},
		TrueNAS:  &TrueNASHost{URL: "http://127.0.0.1:17023", User: "root", Password: "switchyard-lab"},
		Infinia:  &InfiniaHost{URL: "https://127.0.0.1:8443", Account: "clu1/red/csiAccount", Password: "pw", Service: "red/csiService"},
		Synology: &SynologyHost{URL: "http://127.0.0.1:17025", User: "admin", Password: "pw"},
		ShareClients: &ShareClients{NFSExport: "/tank/e2e-clients/nfs", NFSMount: "/var/lib/kubelet/switchyard-lab-shares/clients-nfs",
			SMBShare: "tank_e2e_clients_smb", SMBPath: "/tank/e2e-clients/smb", SMBMount: "/var/lib/kubelet/switchyard-lab-shares/clients-smb"},
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
		"shares":  `{"shareClients":{"nfsExport":"tank/x","nfsMount":"/m","smbShare":"s","smbPath":"/p","smbMount":"/n"}}`,
		"smbname": `{"shareClients":{"nfsExport":"/x","nfsMount":"/m","smbShare":"a/b","smbPath":"/p","smbMount":"/n"}}`,
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

// configCheck runs `switchyard config check` on a proxy main config whose
// folder holds files (connection name -> content).
func configCheck(t *testing.T, files map[string]string) (string, error) {
	t.Helper()
	bin := driverbin.Path(t)
	dir := t.TempDir()
	conns := filepath.Join(dir, "connections")
	os.MkdirAll(conns, 0o755)
	main := filepath.Join(dir, "main.yaml")
	os.WriteFile(main, []byte("driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n  nodeId:\n    parts:\n      nodeName: true\n      nqn: true\n"), 0o600)
	for name, content := range files {
		os.WriteFile(filepath.Join(conns, name+".yaml"), []byte(content), 0o600)
	}
	out, err := exec.Command(bin, "config", "check", main).CombinedOutput()
	return string(out), err
}

// Every row's connection file passes `switchyard config check`: a row
// that renders a file the driver refuses would fail every spec of it in
// the cluster, much later and less clearly.
func TestEveryRowRendersAConnectionTheDriverAccepts(t *testing.T) {
	env := &Env{Lab: sampleLab(), HostPathBase: "/var/lib/csi-local-hostpath", HostPathHostBase: "/var/lib/csi-local-hostpath"}
	files := map[string]string{}
	for _, f := range Families() {
		files["e2e-"+f.Short] = ConnectionFile(env, f, "e2e-"+f.Short)
	}
	out, err := configCheck(t, files)
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "warning:") && !strings.HasSuffix(l, ": ok") {
			t.Errorf("config check: %s", l)
		}
	}
	if err != nil {
		t.Fatalf("config check failed: %v\n%s", err, out)
	}
}

// The table's MaxIDLen agrees with the driver: the safe name passes
// config check's handle-length rule, and the longest name trips it where
// a handle can overflow.
func TestSafeAndLongNamesAgreeWithTheDriver(t *testing.T) {
	env := &Env{Lab: sampleLab(), HostPathBase: "/x", HostPathHostBase: "/x"}
	for _, f := range Families() {
		safe := f.SafeName()
		if len(safe) != f.SafeConnectionLen() {
			t.Fatalf("%s: safe name %q is %d long, want %d", f.Name, safe, len(safe), f.SafeConnectionLen())
		}
		out, err := configCheck(t, map[string]string{safe: f.Connection(env, safe)})
		if err != nil || strings.Contains(out, "too long") {
			t.Errorf("%s: the safe name (%d characters) is refused: %v\n%s", f.Name, len(safe), err, out)
		}
		if f.OverLimit == "" {
			continue
		}
		long := f.LongName()
		out, _ = configCheck(t, map[string]string{long: f.Connection(env, long)})
		if !strings.Contains(out, "too long") {
			t.Errorf("%s: config check does not flag the 63-character name:\n%s", f.Name, out)
		}
	}
}
