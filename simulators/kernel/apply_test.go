package kernel

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
)

func TestValidation(t *testing.T) {
	long := "nqn.2003-01.org.example:" + strings.Repeat("x", 210)
	for _, tc := range []struct {
		name  string
		owner string
		s     State
		want  string
	}{
		{"bad owner", "a/b", State{}, `owner "a/b"`},
		{"empty nqn", "o", State{NVMe: []Subsystem{{}}}, "empty NQN"},
		{"long nqn", "o", State{NVMe: []Subsystem{{NQN: long}}}, "more than 223"},
		{"slash in nqn", "o", State{NVMe: []Subsystem{{NQN: "nqn.x/y"}}}, "configfs cannot name"},
		{"any host and hosts", "o", State{NVMe: []Subsystem{{NQN: nqnA, AllowAnyHost: true, Hosts: []string{host}}}}, "exclude each other"},
		{"nsid 0", "o", State{NVMe: []Subsystem{{NQN: nqnA, Namespaces: []Namespace{{NSID: 0, Path: "/x"}}}}}, "namespace id 0"},
		{"bad uuid", "o", State{NVMe: []Subsystem{{NQN: nqnA, Namespaces: []Namespace{{NSID: 1, Path: "/x", NGUID: "12-34"}}}}}, `"12-34" is not 16 bytes of hex`},
		{"relative path", "o", State{NVMe: []Subsystem{{NQN: nqnA, Namespaces: []Namespace{{NSID: 1, Path: "x.img"}}}}}, "not absolute"},
		{"bad listener", "o", State{NVMe: []Subsystem{{NQN: nqnA, Listeners: []Listener{{Addr: "localhost"}}}}}, `"localhost" is not an IP address`},
		{"twice", "o", State{NVMe: []Subsystem{{NQN: nqnA}, {NQN: nqnA}}}, "listed twice"},
		{"iqn prefix", "o", State{ISCSI: []Target{{IQN: "target1"}}}, "must start with iqn."},
		{"lun twice", "o", State{ISCSI: []Target{{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: "/a"}, {LUN: 0, Path: "/b"}}}}}, "LUN 0 is listed twice"},
		{"half chap", "o", State{ISCSI: []Target{{IQN: iqnA, CHAP: &CHAP{User: "u"}}}}, "CHAP needs a user and a secret"},
		{"half mutual", "o", State{ISCSI: []Target{{IQN: iqnA, CHAP: &CHAP{User: "u", Secret: "s", MutualUser: "m"}}}}, "mutual CHAP"},
		{"export root", "o", State{NFS: []Export{{Path: "/"}}}, "nfs export path is /"},
		{"export options", "o", State{NFS: []Export{{Path: "/x", Options: "a(b"}}}, "not host(options)"},
		{"share name", "o", State{SMB: []Share{{Name: "a]b", Path: "/x"}}}, "contains ["},
		{"reserved share", "o", State{SMB: []Share{{Name: "Global", Path: "/x"}}}, "reserved"},
		{"share twice", "o", State{SMB: []Share{{Name: "a", Path: "/x"}, {Name: "A", Path: "/y"}}}, "listed twice"},
		{"share option", "o", State{SMB: []Share{{Name: "a", Path: "/x", Options: map[string]string{"x": "1\n[evil]"}}}}, "not a valid smb.conf line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := kerneltest.New(t)
			err := reconciler(h, nil).Apply(tc.owner, tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if tree := h.Tree(); len(tree) != 0 || len(h.Commands()) != 0 {
				t.Errorf("an invalid state changed the kernel: %q", tree)
			}
		})
	}
}

// A failed Apply leaves a record from which the next one finishes: here
// losetup fails for the new namespace while the old subsystem's removal
// succeeds, then works.
func TestFailedApplyConverges(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	v1, v2 := h.File("1.zvol", 1<<20), h.File("2.zvol", 1<<20)
	apply(t, r, "sim", State{NVMe: []Subsystem{{NQN: nqnA, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: v1}}}}})
	h.Fail("losetup -f --show "+v2, errFake)
	next := State{NVMe: []Subsystem{{NQN: nqnB, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: v2}}, Listeners: []Listener{{Addr: "127.0.0.1"}}}}}
	err := r.Apply("sim", next)
	if err == nil || !strings.Contains(err.Error(), "attaching "+v2+" to a loop device") || !strings.Contains(err.Error(), "namespace 1") {
		t.Fatalf("err = %v", err)
	}
	tree := h.Tree()
	hasLines(t, "after the failure", tree, []string{"d nvmet/subsystems/" + nqnB}, []string{"d nvmet/subsystems/" + nqnA, "d nvmet/subsystems/" + nqnB + "/namespaces/1"})
	h.Fail("losetup -f --show "+v2, nil)
	apply(t, r, "sim", next)
	hasLines(t, "after the retry", h.Tree(), []string{"a nvmet/subsystems/" + nqnB + "/namespaces/1/enable = 1"}, nil)

	// A removal that fails is retried by the next Apply of any state.
	h.Fail("losetup -d", errFake)
	if err := r.Close("sim"); err == nil {
		t.Fatal("Close with a failing losetup -d succeeded")
	}
	if owners, _ := r.Owners(); !slices.Equal(owners, []string{"sim"}) {
		t.Errorf("owner forgotten after a failed Close: %q", owners)
	}
	h.Fail("losetup -d", nil)
	if err := r.Close("sim"); err != nil {
		t.Fatal(err)
	}
	if got := h.Loops(); len(got) != 0 {
		t.Errorf("loops left: %q", got)
	}
}

// Missing backing files are reported per object; the other objects are
// still served.
func TestMissingFile(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	ok := h.File("ok.zvol", 1<<20)
	err := r.Apply("sim", State{
		NVMe:  []Subsystem{{NQN: nqnA, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: ok}, {NSID: 2, Path: "/nonexistent/zvol"}}}},
		ISCSI: []Target{{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: "/nonexistent/zvol"}}}},
	})
	if err == nil || !strings.Contains(err.Error(), "namespace 2: /nonexistent/zvol: no such file or directory") ||
		!strings.Contains(err.Error(), "LUN 0: /nonexistent/zvol: no such file or directory") {
		t.Fatalf("err = %v", err)
	}
	hasLines(t, "configfs", h.Tree(), []string{"a nvmet/subsystems/" + nqnA + "/namespaces/1/enable = 1", "a target/iscsi/" + iqnA + "/tpgt_1/enable = 1"},
		[]string{"d nvmet/subsystems/" + nqnA + "/namespaces/2"})
}

// CHAP secrets and SMB passwords appear neither in errors nor in logs.
func TestSecretsStayOut(t *testing.T) {
	h := kerneltest.New(t)
	var logs bytes.Buffer
	r := New(Options{ConfigFS: h.ConfigFS, SysFS: h.SysFS, MountInfo: h.MountInfo, StateDir: h.StateDir,
		ExportsDir: h.ExportsDir, NFSD: h.NFSD, SMBAddr: h.SMBAddr, SMBUsers: map[string]string{"u": "smb-pa55"},
		FS: h.FS, Exec: h.Exec, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	h.FS.FailWrites = []string{"/auth/password"}
	v := h.File("v.zvol", 1<<20)
	h.Fail("smbpasswd", errors.New("exit status 1"))
	err := r.Apply("sim", State{
		ISCSI: []Target{{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: v}}, CHAP: &CHAP{User: "u", Secret: "chap-s3cret"}}},
		SMB:   []Share{{Name: "s", Path: h.Mkdir("s")}},
	})
	if err == nil || !strings.Contains(err.Error(), "auth/password: input/output error") || !strings.Contains(err.Error(), "SMB user u") {
		t.Fatalf("want the CHAP and smbpasswd failures, got %v", err)
	}
	for _, secret := range []string{"chap-s3cret", "smb-pa55"} {
		if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
			t.Errorf("secret %q leaked:\nerr: %v\nlogs: %s", secret, err, logs.String())
		}
	}
}

func TestAvailable(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	os.MkdirAll(filepath.Join(h.ConfigFS, "target"), 0o755)
	if ok, reason := r.Available(); !ok {
		t.Errorf("Available() = false, %q", reason)
	}
	h.Fail("modprobe nvmet", errors.New("exit status 1: modprobe: FATAL: Module nvmet not found"))
	ok, reason := r.Available()
	if ok || !strings.Contains(reason, "Module nvmet not found") {
		t.Errorf("Available() = %v, %q", ok, reason)
	}
	h.Fail("modprobe nvmet", nil)
	os.RemoveAll(filepath.Join(h.ConfigFS, "target"))
	if ok, reason := r.Available(); ok || !strings.Contains(reason, "target is missing") {
		t.Errorf("Available() without target/ = %v, %q", ok, reason)
	}
}

func TestRunCommand(t *testing.T) {
	out, err := runCommand(context.Background(), []byte("in"), "sh", "-c", "cat; echo out")
	if err != nil || string(out) != "inout\n" {
		t.Errorf("runCommand = %q, %v", out, err)
	}
	_, err = runCommand(context.Background(), nil, "sh", "-c", "echo oops >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3: oops") || !strings.Contains(err.Error(), "sh -c 'echo oops >&2; exit 3'") {
		t.Errorf("runCommand error = %v", err)
	}
}
