package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// vm-mounts.sh (the guest's /lab/node/mounts.sh), with fake mount(8),
// mountpoint(1) and timeout(1): each request is taken once and answered
// with mount's exit code and output; an NFS and a CIFS request mount their
// source at their target with their options; a target already mounted is
// 0 without a mount; a bad name, type or target (outside the root, nested,
// with ..) is refused without running mount; a failing mount passes its
// code and message on.
func TestVMMountsScript(t *testing.T) {
	dir := t.TempDir()
	bin, reqs, root := filepath.Join(dir, "bin"), filepath.Join(dir, "mounts"), filepath.Join(dir, "root")
	for _, d := range []string{bin, reqs, root} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(dir, "calls")
	fakes := map[string]string{
		// mount fails for a source named "refused", else records itself
		// and marks the target as mounted.
		"mount": `echo "mount $*" >>` + vmShQuote(calls) + `
for last; do :; done
case "$*" in *refused*) echo "mount error(13): Permission denied"; exit 32 ;; esac
touch "$last/.mounted"`,
		"mountpoint": `[ -e "$2/.mounted" ]`,
		"timeout":    `shift; exec "$@"`,
	}
	for name, body := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "mounts.sh")
	if err := os.WriteFile(script, []byte(vmMountsScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "kept"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kept", ".mounted"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	requests := map[string]string{
		"nfs":      "type=nfs\nsource=127.0.0.1:/tank/e2e/nfs\ntarget=" + root + "/nfs\noptions=vers=4.2\n",
		"smb":      "type=cifs\nsource=//127.0.0.1/tank_e2e_smb\ntarget=" + root + "/smb\noptions=credentials=/lab/mounts/smb.cred,vers=3.0", // no final newline
		"kept":     "type=nfs\nsource=127.0.0.1:/tank/e2e/nfs\ntarget=" + root + "/kept\n",
		"denied":   "type=cifs\nsource=//127.0.0.1/refused\ntarget=" + root + "/denied\n",
		"badtype":  "type=ext4\nsource=/dev/sda\ntarget=" + root + "/x\n",
		"outside":  "type=nfs\nsource=h:/e\ntarget=/etc\n",
		"nested":   "type=nfs\nsource=h:/e\ntarget=" + root + "/a/b\n",
		"dotdot":   "type=nfs\nsource=h:/e\ntarget=" + root + "/../etc\n",
		"nosrc":    "type=nfs\ntarget=" + root + "/nosrc\n",
		"Bad_Name": "type=nfs\nsource=h:/e\ntarget=" + root + "/bad\n",
	}
	for name, body := range requests {
		if err := os.WriteFile(filepath.Join(reqs, name+".req"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func() {
		t.Helper()
		cmd := exec.Command("/bin/sh", script, reqs, root+"/")
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mounts.sh: %v: %s", err, out)
		}
	}
	run()
	run() // every request is taken once: a second pass mounts nothing
	answer := func(name string) (string, string) {
		rc, err := os.ReadFile(filepath.Join(reqs, name+".rc"))
		if err != nil {
			return "none", ""
		}
		out, _ := os.ReadFile(filepath.Join(reqs, name+".out"))
		return strings.TrimSpace(string(rc)), string(out)
	}
	for _, tt := range []struct{ name, rc, out string }{
		{"nfs", "0", "mount -t nfs 127.0.0.1:/tank/e2e/nfs " + root + "/nfs: ok"},
		{"smb", "0", "mount -t cifs //127.0.0.1/tank_e2e_smb"},
		{"kept", "0", "already mounted"},
		{"denied", "32", "Permission denied"},
		{"badtype", "2", "want nfs or cifs"},
		{"outside", "2", "directly under"},
		{"nested", "2", "directly under"},
		{"dotdot", "2", "directly under"},
		{"nosrc", "2", "no source"},
		{"Bad_Name", "none", ""},
	} {
		rc, out := answer(tt.name)
		if rc != tt.rc || !strings.Contains(out, tt.out) {
			t.Errorf("%s: rc %s, %q; want rc %s, %q", tt.name, rc, out, tt.rc, tt.out)
		}
	}
	if _, err := os.Stat(filepath.Join(reqs, "Bad_Name.req.refused")); err != nil {
		t.Errorf("a badly named request is not set aside: %v", err)
	}
	b, _ := os.ReadFile(calls)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := map[string]bool{
		"mount -t nfs -o vers=4.2 127.0.0.1:/tank/e2e/nfs " + root + "/nfs":                                    true,
		"mount -t cifs -o credentials=/lab/mounts/smb.cred,vers=3.0 //127.0.0.1/tank_e2e_smb " + root + "/smb": true,
		"mount -t cifs //127.0.0.1/refused " + root + "/denied":                                                true,
	}
	if len(got) != len(want) {
		t.Errorf("mount ran %d times, want %d:\n%s", len(got), len(want), b)
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected %q", g)
		}
	}
	if st, err := os.Stat(filepath.Join(root, "nfs")); err != nil || !st.IsDir() {
		t.Errorf("the target was not made: %v", err)
	}
}
