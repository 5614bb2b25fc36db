package zfsssh

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const nqnBase = "nqn.2003-01.org.linux-nvme"

// nvmeCreateScript is zfs-generic-nvmeof's share script (one port).
func nvmeCreateScript(asset, dataset string) string {
	return fmt.Sprintf(`
# create subsystem
cd /subsystems
create %[1]s:%[2]s
cd %[1]s:%[2]s

set attr allow_any_host=1

# create subsystem namespace
cd namespaces
create 1
cd 1
set device path=/dev/zvol/%[3]s
enable

# associate subsystem/target to port(al)

cd /ports/1/subsystems
create %[1]s:%[2]s


saveconfig savefile=/etc/nvmet/config.json
`, nqnBase, asset, dataset)
}

func nvmeDeleteScript(asset string) string {
	return fmt.Sprintf(`
# delete subsystem from port

cd /ports/1/subsystems
delete %[1]s:%[2]s


# delete subsystem
cd /subsystems
delete %[1]s:%[2]s

saveconfig savefile=/etc/nvmet/config.json
`, nqnBase, asset)
}

func TestNvmetcliDemocraticScripts(t *testing.T) {
	e := startEnv(t, func(o *Options) { o.Files = map[string]string{"/var/run/nvmet-config-loaded": ""} })
	e.host.addZvol(t, "tank/k8s/pvc-2", 1<<30)
	c := e.client("bob")
	// The driver's pre-check, then the script through sudo and a pty.
	if r := runOn(t, c, "test -f /var/run/nvmet-config-loaded", "", false); r.code != 0 {
		t.Fatalf("pre-check: %+v", r)
	}
	r := runOn(t, c, dcsiCommand(nvmeCreateScript("pvc-2", "tank/k8s/pvc-2"), "nvmetcli", true), "", true)
	if r.code != 0 || r.err != nil {
		t.Fatalf("create: %+v", r)
	}
	for _, want := range []string{"Parameter allow_any_host is now '1'.\r\n", "The Namespace has been enabled.\r\n", "/ports/1/subsystems> exit\r\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("create output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "rror") || strings.Contains(r.stdout, "No such") {
		t.Errorf("create output has an error:\n%s", r.stdout)
	}
	nqn := nqnBase + ":pvc-2"
	st := e.srv.NVMet()
	if len(st.Subsystems) != 1 || st.Subsystems[0].NQN != nqn || st.Subsystems[0].Attr["allow_any_host"] != "1" {
		t.Fatalf("subsystems = %+v", st.Subsystems)
	}
	ns := st.Subsystems[0].Namespaces
	if len(ns) != 1 || ns[0].NSID != 1 || ns[0].Path != "/dev/zvol/tank/k8s/pvc-2" || !ns[0].Enabled {
		t.Fatalf("namespaces = %+v", ns)
	}
	if len(st.Ports) != 1 || len(st.Ports[0].Subsystems) != 1 || st.Ports[0].Subsystems[0] != nqn {
		t.Fatalf("ports = %+v", st.Ports)
	}
	// saveconfig wrote nvmetcli's JSON document.
	f, ok := e.srv.File("/etc/nvmet/config.json")
	var doc struct {
		Subsystems []struct {
			NQN        string `json:"nqn"`
			Namespaces []struct {
				Device map[string]string `json:"device"`
				Enable int               `json:"enable"`
			} `json:"namespaces"`
		} `json:"subsystems"`
		Ports []struct {
			PortID     int               `json:"portid"`
			Addr       map[string]string `json:"addr"`
			Subsystems []string          `json:"subsystems"`
		} `json:"ports"`
	}
	if !ok || json.Unmarshal(f.Data, &doc) != nil || len(doc.Subsystems) != 1 || doc.Subsystems[0].Namespaces[0].Device["path"] != "/dev/zvol/tank/k8s/pvc-2" ||
		doc.Ports[0].Addr["trsvcid"] != "4420" || doc.Ports[0].Subsystems[0] != nqn {
		t.Fatalf("config.json = %s", f.Data)
	}
	if !strings.HasPrefix(string(f.Data), "{\n  \"hosts\": [],\n  \"ports\": [\n    {\n      \"addr\": {\n        \"adrfam\": \"ipv4\",") {
		t.Errorf("config.json is not formatted like json.dumps(sort_keys=True, indent=2):\n%s", f.Data)
	}

	r = runOn(t, c, dcsiCommand(nvmeDeleteScript("pvc-2"), "nvmetcli", true), "", true)
	if r.code != 0 || strings.Contains(r.stdout, "No such") || strings.Contains(r.stdout, "Could not") {
		t.Fatalf("delete: %+v", r)
	}
	if st := e.srv.NVMet(); len(st.Subsystems) != 0 || len(st.Ports[0].Subsystems) != 0 {
		t.Fatalf("after delete: %+v", st)
	}
	// A second delete reports what is missing and still exits 0.
	r = runOn(t, c, dcsiCommand(nvmeDeleteScript("pvc-2"), "nvmetcli", true), "", true)
	if r.code != 0 || !strings.Contains(r.stdout, "Could not unlink "+nqn+" in configFS: [Errno 2] No such file or directory: '/sys/kernel/config/nvmet/ports/1/subsystems/"+nqn+"'") ||
		!strings.Contains(r.stdout, "No such Subsystem in configfs: /sys/kernel/config/nvmet/subsystems/"+nqn) {
		t.Fatalf("second delete: %+v", r)
	}
}

func TestNvmetcliErrors(t *testing.T) {
	e := startEnv(t, nil)
	e.host.addZvol(t, "tank/v", 1<<20)
	sub := nqnBase + ":s"
	setup := "cd /subsystems\ncreate " + sub + "\ncd " + sub + "/namespaces\ncreate 1\ncd 1\nset device path=/dev/zvol/tank/v\nenable\n/hosts create nqn.h1\n"
	if r := runOn(t, e.client("root"), "nvmetcli", setup, false); r.code != 0 || r.stderr != "" {
		t.Fatalf("setup: %+v", r)
	}
	long := nqnBase + ":" + strings.Repeat("x", 223-len(nqnBase)-1)
	ns := "/subsystems/" + sub + "/namespaces"
	cases := []struct {
		name, script, stderr string
	}{
		{"duplicate subsystem", "/subsystems create " + sub, "This Subsystem already exists in configFS\n"},
		{"nqn of 224 bytes", "/subsystems create " + long + "y", "Could not create Subsystem in configFS\n"},
		{"delete missing subsystem", "/subsystems delete nqn.nope", "No such Subsystem in configfs: /sys/kernel/config/nvmet/subsystems/nqn.nope\n"},
		{"duplicate namespace", ns + " create 1", "This Namespace already exists in configFS\n"},
		{"nsid out of range", ns + " create 9000", "NSID must be 1 to 8192\n"},
		{"delete missing namespace", ns + " delete 7", "No such Namespace in configfs: /sys/kernel/config/nvmet/subsystems/" + sub + "/namespaces/7\n"},
		{"device of an enabled namespace", ns + "/1 set device path=/dev/zvol/tank/other", "Cannot set attribute while Namespace is enabled\n"},
		{"enable without a device", ns + " create 2\n" + ns + "/2 set device path=/dev/zvol/tank/missing\n" + ns + "/2 enable", "The Namespace could not be enabled.\n"},
		{"link a missing subsystem", "/ports/1/subsystems create nqn.nope",
			"Could not symlink nqn.nope in configFS: [Errno 2] No such file or directory: '/sys/kernel/config/nvmet/subsystems/nqn.nope' -> '/sys/kernel/config/nvmet/ports/1/subsystems/nqn.nope'\n"},
		{"allowed host missing", "/subsystems/" + sub + "/allowed_hosts create nqn.h2",
			"Could not symlink nqn.h2 in configFS: [Errno 2] No such file or directory: '/sys/kernel/config/nvmet/hosts/nqn.h2' -> '/sys/kernel/config/nvmet/subsystems/" + sub + "/allowed_hosts/nqn.h2'\n"},
		{"unknown attr", "/subsystems/" + sub + " set attr bogus=1", "Unknown parameter bogus in group 'attr'.\n"},
		{"duplicate port", "/ports create 1", "This Port already exists in configFS\n"},
		{"no such path", "cd /subsystems/nope", "No such path /subsystems/nope\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runOn(t, e.client("root"), "nvmetcli", tc.script+"\n", false)
			if r.code != 0 || r.stderr != tc.stderr {
				t.Fatalf("script %q: %+v\nwant exit 0 and stderr %q", tc.script, r, tc.stderr)
			}
		})
	}
	t.Run("address of an enabled port", func(t *testing.T) {
		r := runOn(t, e.client("root"), "nvmetcli", "/ports/1/subsystems create "+sub+"\n/ports/1 set addr traddr=10.0.0.1\n", false)
		if r.stderr != "Cannot set attribute /sys/kernel/config/nvmet/ports/1/addr_traddr: [Errno 13] Permission denied\n" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("allow_any_host with explicit hosts", func(t *testing.T) {
		r := runOn(t, e.client("root"), "nvmetcli", "/subsystems/"+sub+"/allowed_hosts create nqn.h1\n/subsystems/"+sub+" set attr allow_any_host=1\n", false)
		if r.stderr != "Cannot set attribute /sys/kernel/config/nvmet/subsystems/"+sub+"/attr_allow_any_host: [Errno 22] Invalid argument\n" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("non-integer nsid crashes", func(t *testing.T) {
		r := runOn(t, e.client("root"), "nvmetcli", ns+" create x\n", false)
		if r.code != 1 || !strings.HasSuffix(r.stderr, "ValueError: invalid literal for int() with base 10: 'x'\n") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("non-root", func(t *testing.T) {
		r := e.runAs("alice", "/usr/sbin/nvmetcli ls")
		if r.code != 255 || r.stderr != "/usr/sbin/nvmetcli: must run as root.\n" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("ls", func(t *testing.T) {
		r := e.run("nvmetcli ls")
		for _, want := range []string{"o- / ", "  o- hosts ", "  | o- nqn.h1 ", "  o- ports ", "  | o- 1 ", "[trtype=tcp, traddr=127.0.0.1, trsvcid=4420]",
			"  o- subsystems ", "    o- " + sub + " ", "[path=/dev/zvol/tank/v, uuid="} {
			if !strings.Contains(r.stdout, "\n"+want) && !strings.HasPrefix(r.stdout, want) && !strings.Contains(r.stdout, want) {
				t.Errorf("ls lacks %q:\n%s", want, r.stdout)
			}
		}
	})
}

func TestNvmetcliSaveRestore(t *testing.T) {
	dir := t.TempDir()
	host := newFakeHost(t)
	host.addZvol(t, "tank/k8s/pvc-3", 1<<20)
	o := Options{Host: host, Users: defaultUsers(), StateDir: dir,
		NVMetPorts: []NVMetPort{{ID: 1, Trtype: "tcp", Adrfam: "ipv4", Traddr: "127.0.0.1", Trsvcid: "4420"}}}
	e := startWith(t, host, o)
	if r := runOn(t, e.client("root"), dcsiCommand(nvmeCreateScript("pvc-3", "tank/k8s/pvc-3"), "nvmetcli", false), "", true); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	want := e.srv.NVMet()
	for _, step := range []struct{ cmd, stdout string }{
		{"nvmetcli save /tmp/nvmet.json", ""},
		{"nvmetcli clear", ""},
		{"nvmetcli restore /tmp/nvmet.json", ""},
		{"nvmetcli restore /nonexistent.json", "No saved config file at /nonexistent.json, ok, exiting\n"},
	} {
		if r := e.run(step.cmd); r.code != 0 || r.stdout != step.stdout {
			t.Fatalf("%s: %+v", step.cmd, r)
		}
		if step.cmd == "nvmetcli clear" {
			if st := e.srv.NVMet(); len(st.Subsystems)+len(st.Ports)+len(st.Hosts) != 0 {
				t.Fatalf("after clear: %+v", st)
			}
		}
	}
	if got := e.srv.NVMet(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after restore:\n%+v\nwant\n%+v", got, want)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	// The live configuration survives a restart of the simulator, and the
	// seed ports do not come back twice.
	e2 := startWith(t, host, o)
	if got := e2.srv.NVMet(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after restart:\n%+v\nwant\n%+v", got, want)
	}
	if r := e2.run("nvmetcli --help"); r.code != 255 || !strings.HasPrefix(r.stdout, "syntax: /usr/sbin/nvmetcli save [file_to_save_to]\n") {
		t.Fatalf("--help: %+v", r)
	}
}
