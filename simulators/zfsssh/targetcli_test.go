package zfsssh

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

const iqnBase = "iqn.2003-01.org.linux-iscsi.ubuntu-19.x8664:sn.172d3f56a0ce"

// dcsiCommand builds the command line democratic-csi sends for a
// targetcli/nvmetcli script: sh -c 'echo "<script>" | [sudo] <tool>'.
func dcsiCommand(script, tool string, sudo bool) string {
	cli := tool
	if sudo {
		cli = "sudo " + tool
	}
	return "sh -c '" + strings.Join([]string{`echo "` + strings.TrimSpace(script) + `"`, "|", cli}, " ") + "'"
}

// iscsiCreateScript is zfs-generic-iscsi's share script (tpg attributes,
// CHAP and a block attribute configured).
func iscsiCreateScript(asset, dataset string) string {
	return fmt.Sprintf(`
# create target
cd /iscsi
create %[1]s:%[2]s

# setup tpg
cd /iscsi/%[1]s:%[2]s/tpg1

set attribute authentication=0
set attribute generate_node_acls=1
set attribute cache_dynamic_acls=1
set attribute demo_mode_write_protect=0

set auth userid=chapuser
set auth password=chap-secret-123

# create extent
cd /backstores/block
create %[2]s /dev/zvol/%[3]s
cd /backstores/block/%[2]s

set attribute emulate_tpu=1

# add extent to target/tpg
cd /iscsi/%[1]s:%[2]s/tpg1/luns
create /backstores/block/%[2]s
`, iqnBase, asset, dataset)
}

func iscsiDeleteScript(asset string) string {
	return fmt.Sprintf(`
# delete target
cd /iscsi
delete %[1]s:%[2]s

# delete extent
cd /backstores/block
delete %[2]s
`, iqnBase, asset)
}

func TestTargetcliDemocraticScripts(t *testing.T) {
	for _, tc := range []struct {
		name string
		user string
		sudo bool
	}{{"root", "root", false}, {"sudo", "bob", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, nil)
			e.host.addZvol(t, "tank/k8s/pvc-1", 1<<30)
			c := e.client(tc.user)
			r := runOn(t, c, dcsiCommand(iscsiCreateScript("pvc-1", "tank/k8s/pvc-1"), "targetcli", tc.sudo), "", true)
			if r.code != 0 || r.err != nil {
				t.Fatalf("create: %+v", r)
			}
			iqn := iqnBase + ":pvc-1"
			for _, want := range []string{
				"Created target " + iqn + ".\r\n",
				"Created TPG 1.\r\n",
				"Created default portal listening on all IPs (::0), port 3260.\r\n",
				"Parameter generate_node_acls is now '1'.\r\n",
				"Created block storage object pvc-1 using /dev/zvol/tank/k8s/pvc-1.\r\n",
				"Parameter emulate_tpu is now '1'.\r\n",
				"Created LUN 0.\r\n",
				"/iscsi/iqn.20...ce:pvc-1/tpg1> Parameter authentication is now '0'.\r\n", // prompt shortened to 30 characters
				"exit\r\nGlobal pref auto_save_on_exit=true\r\nConfiguration saved to /etc/target/saveconfig.json\r\n",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("create output lacks %q:\n%s", want, r.stdout)
				}
			}
			st := e.srv.LIO()
			if len(st.Targets) != 1 || st.Targets[0].WWN != iqn || len(st.Targets[0].TPGs) != 1 {
				t.Fatalf("targets = %+v", st.Targets)
			}
			tpg := st.Targets[0].TPGs[0]
			if tpg.Attributes["generate_node_acls"] != "1" || tpg.Attributes["demo_mode_write_protect"] != "0" || !tpg.Enable {
				t.Errorf("tpg = %+v", tpg)
			}
			if tpg.Auth["userid"] != "chapuser" || tpg.Auth["password"] != "chap-secret-123" {
				t.Errorf("tpg auth = %v", tpg.Auth)
			}
			if len(tpg.LUNs) != 1 || tpg.LUNs[0] != (LUN{Index: 0, StorageObject: "/backstores/block/pvc-1"}) {
				t.Errorf("luns = %+v", tpg.LUNs)
			}
			if len(tpg.Portals) != 1 || tpg.Portals[0] != (Portal{IP: "::0", Port: 3260}) {
				t.Errorf("portals = %+v", tpg.Portals)
			}
			if len(st.StorageObjects) != 1 || st.StorageObjects[0].Dev != "/dev/zvol/tank/k8s/pvc-1" || st.StorageObjects[0].Size != 1<<30 ||
				st.StorageObjects[0].Attributes["emulate_tpu"] != "1" {
				t.Errorf("storage objects = %+v", st.StorageObjects)
			}
			f, ok := e.srv.File("/etc/target/saveconfig.json")
			var saved LIOState
			if !ok || json.Unmarshal(f.Data, &saved) != nil || len(saved.Targets) != 1 {
				t.Errorf("saveconfig.json = %q", f.Data)
			}

			r = runOn(t, c, dcsiCommand(iscsiDeleteScript("pvc-1"), "targetcli", tc.sudo), "", true)
			if r.code != 0 || !strings.Contains(r.stdout, "Deleted Target "+iqn+".") || !strings.Contains(r.stdout, "Deleted storage object pvc-1.") {
				t.Fatalf("delete: %+v", r)
			}
			if st := e.srv.LIO(); len(st.Targets) != 0 || len(st.StorageObjects) != 0 {
				t.Fatalf("after delete: %+v", st)
			}
			// Deleting again: targetcli logs the errors but exits 0.
			r = runOn(t, c, dcsiCommand(iscsiDeleteScript("pvc-1"), "targetcli", tc.sudo), "", true)
			if r.code != 0 || !strings.Contains(r.stdout, "No such Target in configfs: /sys/kernel/config/target/iscsi/"+iqn+"\r\n") ||
				!strings.Contains(r.stdout, "No storage object named pvc-1.\r\n") {
				t.Fatalf("second delete: %+v", r)
			}
		})
	}
}

func TestTargetcliErrors(t *testing.T) {
	e := startEnv(t, nil)
	e.host.addZvol(t, "tank/v1", 1<<20)
	setup := "cd /iscsi\ncreate " + iqnBase + ":dup\ncd /backstores/block\ncreate v1 /dev/zvol/tank/v1\n"
	if r := runOn(t, e.client("root"), "targetcli", setup, false); r.code != 0 || r.stderr != "" {
		t.Fatalf("setup: %+v", r)
	}
	long := "iqn.2003-01.org.example:" + strings.Repeat("x", 223-len("iqn.2003-01.org.example:"))
	cases := []struct {
		name   string
		script string
		stderr string // the error targetcli prints (interactive mode: exit 0)
	}{
		{"duplicate target", "/iscsi create " + iqnBase + ":dup", "This Target already exists in configFS\n"},
		{"duplicate target, other case", "/iscsi create " + strings.ToUpper(iqnBase[:3]) + iqnBase[3:] + ":DUP", "This Target already exists in configFS\n"},
		{"invalid wwn", "/iscsi create iqn.bogus", "WWN not valid as: iqn, naa, eui\n"},
		{"underscore in iqn", "/iscsi create iqn.2003-01.org.x:a_b", "WWN not valid as: iqn, naa, eui\n"},
		{"iqn of 224 bytes", "/iscsi create " + long + "y",
			"Could not create Target in configFS: [Errno 22] Invalid argument: '/sys/kernel/config/target/iscsi/" + long + "y'\n"},
		{"delete missing target", "/iscsi delete " + iqnBase + ":nope", "No such Target in configfs: /sys/kernel/config/target/iscsi/" + iqnBase + ":nope\n"},
		{"missing device", "/backstores/block create v2 /dev/zvol/tank/missing", "Could not open /dev/zvol/tank/missing\n"},
		{"duplicate backstore", "/backstores/block create v1 /dev/zvol/tank/v1", "Storage object block/v1 exists\n"},
		{"device in use", "/backstores/block create v9 /dev/zvol/tank/v1", "Cannot configure StorageObject because device {dev} is already in use\n"},
		{"bad name", "/backstores/block create a/b /dev/zvol/tank/v1", "A storage object's name cannot contain  /, newline or spaces/tabs\n"},
		{"delete missing backstore", "/backstores/block delete nope", "No storage object named nope.\n"},
		{"no such path", "cd /iscsi/nope", "No such path /iscsi/nope\n"},
		{"unknown command", "frobnicate", "Command not found frobnicate\n"},
		{"missing parameter", "/backstores/block create v3", "Missing required parameter dev\n"},
		{"too many parameters", "/iscsi delete a b", "Got 2 positionnal parameters, expected exactly 1.\n"},
		{"too many optional parameters", "/iscsi create a b", "Got 2 positionnal parameters, expected at most 1.\n"},
		{"unexpected keyword", "/iscsi create foo=bar", "Unexpected keyword parameter 'foo'.\n"},
		{"lun for a missing object", "cd /iscsi/" + iqnBase + ":dup/tpg1/luns\ncreate /backstores/block/nope", "storage object or path not valid\n"},
		{"unknown attribute", "cd /iscsi/" + iqnBase + ":dup/tpg1\nset attribute bogus=1", "Unknown parameter bogus in group 'attribute'.\n"},
		{"attribute not a number", "cd /iscsi/" + iqnBase + ":dup/tpg1\nset attribute authentication=x", "Not setting authentication! Syntax error, 'x' is not a NUMBER.\n"},
		{"unknown group", "cd /iscsi\nset bogus a=b", "Unknown configuration group: bogus\n"},
		{"tag not a number", "/iscsi/" + iqnBase + ":dup create tpgx", "Tag argument must be a number.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runOn(t, e.client("root"), "targetcli", tc.script+"\n", false)
			if r.code != 0 || r.stderr != tc.stderr {
				t.Fatalf("script %q: %+v\nwant exit 0 and stderr %q", tc.script, r, tc.stderr)
			}
		})
	}
	if st := e.srv.LIO(); len(st.Targets) != 1 || len(st.StorageObjects) != 1 {
		t.Fatalf("failed commands changed the state: %+v", st)
	}
	t.Run("one-shot command exits 1 on error", func(t *testing.T) {
		r := e.run("targetcli /iscsi delete " + iqnBase + ":nope")
		if r.code != 1 || !strings.Contains(r.stderr, "No such Target in configfs") {
			t.Fatalf("%+v", r)
		}
		r = e.run("targetcli /iscsi create " + iqnBase + ":oneshot")
		if r.code != 0 || !strings.Contains(r.stdout, "Created target "+iqnBase+":oneshot.") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("iqn of 223 bytes is accepted", func(t *testing.T) {
		r := e.run("targetcli /iscsi create " + long)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("non-root without sudo", func(t *testing.T) {
		r := e.runAs("alice", "targetcli ls")
		if r.code != 1 || r.stdout != "opening lockfile failed: [Errno 13] Permission denied: '/var/run/targetcli.lock'\n" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("version", func(t *testing.T) {
		if r := e.run("targetcli --version"); r.code != 0 || r.stderr != "/usr/bin/targetcli version 2.1.53\n" {
			t.Fatalf("%+v", r)
		}
	})
}

func TestTargetcliLs(t *testing.T) {
	e := startEnv(t, nil)
	e.host.addZvol(t, "tank/v1", 1<<30)
	if r := runOn(t, e.client("root"), "targetcli", "/backstores/block create v1 /dev/zvol/tank/v1\n/iscsi create "+iqnBase+":ls\n/iscsi/"+iqnBase+":ls/tpg1/luns create /backstores/block/v1\n", false); r.code != 0 {
		t.Fatalf("setup: %+v", r)
	}
	r := e.run("targetcli ls")
	if r.code != 0 {
		t.Fatalf("ls: %+v", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	for _, want := range []string{
		"o- / ",
		"  o- backstores ",
		"  | o- block ",
		"  | | o- v1 ",
		"  o- iscsi ",
		"    o- " + iqnBase + ":ls ",
		"      o- tpg1 ",
		"        o- acls ",
		"        o- luns ",
		"        | o- lun0 ",
		"        o- portals ",
		"          o- [::0]:3260 ",
	} {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("ls lacks a line starting %q:\n%s", want, r.stdout)
		}
	}
	for _, l := range lines {
		// Without a terminal configshell draws 132 columns.
		if len(l) != 132 {
			t.Errorf("line is %d wide, want 132: %q", len(l), l)
		}
	}
	// On a terminal the tree takes the terminal's width.
	tty := runOn(t, e.client("root"), "targetcli ls", "", true)
	for _, l := range strings.Split(strings.TrimSuffix(tty.stdout, "\r\n"), "\r\n") {
		if len(l) != 80 {
			t.Errorf("pty line is %d wide, want 80: %q", len(l), l)
		}
	}
	if !strings.Contains(r.stdout, "[Storage Objects: 1]") || !strings.Contains(r.stdout, "[/dev/zvol/tank/v1 (1.0GiB) write-thru activated]") ||
		!strings.Contains(r.stdout, "[Targets: 1]") || !strings.Contains(r.stdout, "[block/v1 (/dev/zvol/tank/v1) (default_tg_pt_gp)]") {
		t.Errorf("ls summaries:\n%s", r.stdout)
	}
}

func TestTargetcliPersistence(t *testing.T) {
	dir := t.TempDir()
	host := newFakeHost(t)
	host.addZvol(t, "tank/k8s/pvc-9", 1<<20)
	o := Options{Host: host, Users: defaultUsers(), StateDir: dir}
	e := startWith(t, host, o)
	if r := runOn(t, e.client("root"), dcsiCommand(iscsiCreateScript("pvc-9", "tank/k8s/pvc-9"), "targetcli", false), "", true); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if r := e.run("targetcli set global auto_add_default_portal=false"); r.code != 0 {
		t.Fatalf("set global: %+v", r)
	}
	before := e.srv.LIO()
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := startWith(t, host, o)
	after := e2.srv.LIO()
	if len(after.Targets) != 1 || after.Targets[0].WWN != before.Targets[0].WWN || len(after.StorageObjects) != 1 {
		t.Fatalf("after restart: %+v", after)
	}
	if r := e2.run("test -f /etc/target/saveconfig.json"); r.code != 0 {
		t.Fatal("saveconfig.json did not survive the restart")
	}
	// The preference survived too: a new target gets no portal.
	r := e2.run("targetcli /iscsi create " + iqnBase + ":second")
	if r.code != 0 || strings.Contains(r.stdout, "Created default portal") {
		t.Fatalf("after restart, create: %+v", r)
	}
}

// TestTargetcliOverlaps keeps one targetcli waiting for input while another
// runs: the counter a driver's serialisation is checked against.
func TestToolOverlaps(t *testing.T) {
	for _, tool := range []string{"targetcli", "nvmetcli"} {
		t.Run(tool, func(t *testing.T) {
			e := startEnv(t, nil)
			c := e.client("root")
			if r := e.run(tool + " ls"); r.code != 0 {
				t.Fatalf("serial run: %+v", r)
			}
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			in, _ := s.StdinPipe()
			out, _ := s.StdoutPipe()
			if err := s.Start(tool); err != nil {
				t.Fatal(err)
			}
			readUntil(t, bufio.NewReader(out), "/> ")
			if r := e.run(tool + " ls"); r.code != 0 {
				t.Fatalf("overlapping run: %+v", r)
			}
			in.Close()
			if err := s.Wait(); err != nil {
				t.Fatalf("waiting run: %v", err)
			}
			st := e.srv.Stats()
			runs, overlaps := st.TargetcliRuns, st.TargetcliOverlaps
			if tool == "nvmetcli" {
				runs, overlaps = st.NvmetcliRuns, st.NvmetcliOverlaps
			}
			if runs != 3 || overlaps != 1 {
				t.Fatalf("runs %d overlaps %d, want 3 and 1", runs, overlaps)
			}
		})
	}
}

func TestParseCSLine(t *testing.T) {
	cases := []struct {
		line string
		want csLine
	}{
		{"cd /iscsi", csLine{command: "cd", pparams: []string{"/iscsi"}}},
		{"/iscsi create iqn.2003-01.org.x:y", csLine{path: "/iscsi", command: "create", pparams: []string{"iqn.2003-01.org.x:y"}}},
		{"set attribute a=1 b=2", csLine{command: "set", pparams: []string{"attribute"}, kparams: []csKV{{"a", "1"}, {"b", "2"}}}},
		{"set device path=/dev/zvol/tank/a", csLine{command: "set", pparams: []string{"device"}, kparams: []csKV{{"path", "/dev/zvol/tank/a"}}}},
		// "#" is a positional parameter without a command: configshell then
		// runs "cd .", which is why comment lines are harmless.
		{"# create target", csLine{pparams: []string{"#", "create", "target"}}},
		{"saveconfig savefile=", csLine{command: "saveconfig", kparams: []csKV{{"savefile", ""}}}},
		{`set auth password=a"b c`, csLine{command: "set", pparams: []string{"auth"}, kparams: []csKV{{"password", "a"}}}},
		{"..", csLine{path: ".."}},
		{"/", csLine{path: "/"}},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			got := parseCSLine(tc.line)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("parseCSLine(%q) = %+v, want %+v", tc.line, got, tc.want)
			}
		})
	}
}

// targetcli keeps max_backup_files backups of the saved configuration; the
// simulator once kept one per second of activity for ever (655 files and a
// 43 MB state after 12 minutes of iSCSI load).
func TestTargetcliPrunesBackups(t *testing.T) {
	e := startEnv(t, nil)
	const dir = "/etc/target/backup/"
	for i := range 15 {
		e.srv.fs.putFile(fmt.Sprintf("%ssaveconfig-20200101-00:00:%02d-json.gz", dir, i), []byte("old"), 0o600)
	}
	e.srv.fs.putFile(dir+"unrelated.txt", []byte("keep me"), 0o600)
	e.host.addZvol(t, "tank/k8s/pvc-1", 1<<30)
	c := e.client("root")
	for _, script := range []string{iscsiCreateScript("pvc-1", "tank/k8s/pvc-1"), iscsiDeleteScript("pvc-1")} {
		if r := runOn(t, c, dcsiCommand(script, "targetcli", false), "", true); r.code != 0 || r.err != nil {
			t.Fatalf("targetcli: %+v", r)
		}
	}
	names := e.srv.fs.files(strings.TrimSuffix(dir, "/"), "saveconfig-")
	if len(names) != 10 {
		t.Fatalf("%d backups kept; want max_backup_files (10): %v", len(names), names)
	}
	// At least one new backup was written (the second run saved over a
	// different configuration), so at most 9 of the 15 old ones remain,
	// and they are the newest of them.
	if newest := names[len(names)-1]; !strings.HasPrefix(newest, "saveconfig-"+time.Now().Format("2006")) {
		t.Fatalf("no backup from this run among %v", names)
	}
	if names[0] <= "saveconfig-20200101-00:00:05-json.gz" {
		t.Fatalf("the oldest backups should go first: %v", names)
	}
	if _, ok := e.srv.File(dir + "unrelated.txt"); !ok {
		t.Fatal("a file that is not a backup was removed")
	}
}
