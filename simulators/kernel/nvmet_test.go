package kernel

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
)

const (
	nqnA = "nqn.2003-01.org.linux-nvme:vol-a"
	nqnB = "nqn.2003-01.org.linux-nvme:vol-b"
	host = "nqn.2014-08.org.nvmexpress:uuid:0f0e0d0c-0b0a-0908-0706-050403020100"
)

func TestNVMeCreateAndIdempotence(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	vol := h.File("vol-a.zvol", 64<<20)
	st := State{NVMe: []Subsystem{{
		NQN: nqnA, AllowAnyHost: true, Serial: "abcdef0123456789",
		Namespaces: []Namespace{{NSID: 1, Path: vol, UUID: "6C5A0B1E-0000-4000-8000-000000000001"}},
		Listeners:  []Listener{{Addr: "127.0.0.1"}},
	}}}
	apply(t, r, "sim", st)
	hasLines(t, "configfs", h.Tree(), []string{
		"d nvmet/subsystems/" + nqnA,
		"a nvmet/subsystems/" + nqnA + "/attr_allow_any_host = 1",
		"a nvmet/subsystems/" + nqnA + "/attr_serial = abcdef0123456789",
		"a nvmet/subsystems/" + nqnA + "/namespaces/1/device_path = /dev/loop0",
		"a nvmet/subsystems/" + nqnA + "/namespaces/1/device_uuid = 6c5a0b1e-0000-4000-8000-000000000001",
		"a nvmet/subsystems/" + nqnA + "/namespaces/1/enable = 1",
		"a nvmet/ports/1/addr_trtype = tcp",
		"a nvmet/ports/1/addr_adrfam = ipv4",
		"a nvmet/ports/1/addr_traddr = 127.0.0.1",
		"a nvmet/ports/1/addr_trsvcid = 4420",
		"l nvmet/ports/1/subsystems/" + nqnA + " -> nvmet/subsystems/" + nqnA,
	}, nil)
	if got := h.Commands(); !slices.Equal(got, []string{"losetup -f --show " + vol}) {
		t.Errorf("commands = %q, want one losetup", got)
	}
	if got := h.Loops(); !slices.Equal(got, []string{"loop0=" + vol}) {
		t.Errorf("loops = %q", got)
	}

	before := h.Tree()
	for i := 0; i < 2; i++ {
		p := r.newPassForTest(t, "sim", st)
		if p.cfs.changes != 0 || p.ran != 0 || len(p.errs) != 0 {
			t.Fatalf("re-applying the same state: %d configfs changes, %d commands, errors %v", p.cfs.changes, p.ran, p.errs)
		}
	}
	if after := h.Tree(); !slices.Equal(before, after) {
		t.Errorf("tree changed by an idempotent apply:\n%q\n%q", before, after)
	}
}

// newPassForTest applies s like Apply does and returns the pass, so a
// test can see how much it changed.
func (r *Reconciler) newPassForTest(t *testing.T, owner string, s State) *pass {
	t.Helper()
	s = s.normalize()
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	unlock, err := r.lockLedger()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	l, err := r.loadLedger()
	if err != nil {
		t.Fatal(err)
	}
	p := r.newPass(l, owner, s)
	p.run()
	l.Owners[owner] = withoutSecrets(s)
	if err := r.saveLedger(l); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNVMeUpdates(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	vol1 := h.File("v1.zvol", 16<<20)
	vol2 := h.File("v2.zvol", 16<<20)
	base := Subsystem{NQN: nqnA, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: vol1}}, Listeners: []Listener{{Addr: "127.0.0.1"}}}
	apply(t, r, "sim", State{NVMe: []Subsystem{base}})
	h.Commands()
	sub := "nvmet/subsystems/" + nqnA

	steps := []struct {
		name        string
		change      func(s *Subsystem)
		want, gone  []string
		wantCmds    []string
		beforeApply func()
	}{
		{
			name:   "allow only one host",
			change: func(s *Subsystem) { s.AllowAnyHost, s.Hosts = false, []string{host} },
			want:   []string{"a " + sub + "/attr_allow_any_host = 0", "d nvmet/hosts/" + host, "l " + sub + "/allowed_hosts/" + host + " -> nvmet/hosts/" + host},
		},
		{
			name:   "back to any host (links go before the attribute flips)",
			change: func(s *Subsystem) { s.AllowAnyHost, s.Hosts = true, nil },
			want:   []string{"a " + sub + "/attr_allow_any_host = 1"},
			gone:   []string{"d nvmet/hosts/" + host, "l " + sub + "/allowed_hosts/" + host + " -> nvmet/hosts/" + host},
		},
		{
			name:     "second namespace",
			change:   func(s *Subsystem) { s.Namespaces = append(s.Namespaces, Namespace{NSID: 2, Path: vol2}) },
			want:     []string{"a " + sub + "/namespaces/2/device_path = /dev/loop1", "a " + sub + "/namespaces/2/enable = 1"},
			wantCmds: []string{"losetup -f --show " + vol2},
		},
		{
			name:        "file grows: loop refreshed, namespace revalidated",
			beforeApply: func() { os.Truncate(vol2, 32<<20) },
			change:      func(s *Subsystem) {},
			want:        []string{"a " + sub + "/namespaces/2/revalidate_size = 1"},
			wantCmds:    []string{"losetup -c /dev/loop1"},
		},
		{
			name:     "namespace removed, its loop detached",
			change:   func(s *Subsystem) { s.Namespaces = s.Namespaces[:1] },
			gone:     []string{"d " + sub + "/namespaces/2"},
			wantCmds: []string{"losetup -d /dev/loop1"},
		},
		{
			name:   "new uuid: disabled, changed, enabled",
			change: func(s *Subsystem) { s.Namespaces[0].UUID = "11111111-2222-4333-8444-555555555555" },
			want:   []string{"a " + sub + "/namespaces/1/device_uuid = 11111111-2222-4333-8444-555555555555", "a " + sub + "/namespaces/1/enable = 1"},
		},
		{
			name:   "listener moves to another port: the unused port goes",
			change: func(s *Subsystem) { s.Listeners = []Listener{{Addr: "127.0.0.1", Port: 4421}} },
			want:   []string{"a nvmet/ports/2/addr_trsvcid = 4421", "l nvmet/ports/2/subsystems/" + nqnA + " -> " + sub},
			gone:   []string{"a nvmet/ports/1/addr_trsvcid = 4420"},
		},
	}
	cur := base
	cur.Namespaces = slices.Clone(base.Namespaces)
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.beforeApply != nil {
				step.beforeApply()
			}
			step.change(&cur)
			apply(t, r, "sim", State{NVMe: []Subsystem{cur}})
			hasLines(t, "configfs", h.Tree(), step.want, step.gone)
			cmds := kerneltest.Changing(h.Commands())
			if !slices.Equal(cmds, step.wantCmds) {
				t.Errorf("commands = %q, want %q", cmds, step.wantCmds)
			}
		})
	}
}

func TestNVMeSharedPortsAndOwners(t *testing.T) {
	h := kerneltest.New(t)
	ra, rb := reconciler(h, nil), reconciler(h, nil) // two processes, one kernel
	va, vb := h.File("a.zvol", 8<<20), h.File("b.zvol", 8<<20)
	lis := []Listener{{Addr: "127.0.0.1", Port: 4420}}
	apply(t, ra, "zfsssh", State{NVMe: []Subsystem{{NQN: nqnA, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: va}}, Listeners: lis}}})
	apply(t, rb, "truenas", State{NVMe: []Subsystem{{NQN: nqnB, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: vb}}, Listeners: lis}}})
	tree := h.Tree()
	if ports := withPrefix(tree, "a nvmet/ports/"); len(withPrefix(ports, "a nvmet/ports/1/")) != 4 || len(ports) != 4 {
		t.Fatalf("want one shared port, have %q", ports)
	}
	hasLines(t, "configfs", tree, []string{
		"l nvmet/ports/1/subsystems/" + nqnA + " -> nvmet/subsystems/" + nqnA,
		"l nvmet/ports/1/subsystems/" + nqnB + " -> nvmet/subsystems/" + nqnB,
	}, nil)

	// An owner cannot take over another's subsystem.
	err := rb.Apply("truenas", State{NVMe: []Subsystem{{NQN: nqnA, AllowAnyHost: true}}})
	if err == nil || !strings.Contains(err.Error(), "nvme subsystem "+nqnA+" belongs to zfsssh") {
		t.Fatalf("taking another owner's NQN: err = %v", err)
	}
	hasLines(t, "configfs after the refused apply", h.Tree(), []string{"a nvmet/subsystems/" + nqnA + "/namespaces/1/enable = 1"}, nil)

	if err := ra.Close("zfsssh"); err != nil {
		t.Fatal(err)
	}
	tree = h.Tree()
	hasLines(t, "after closing zfsssh", tree,
		[]string{"a nvmet/ports/1/addr_trsvcid = 4420", "d nvmet/subsystems/" + nqnB},
		[]string{"d nvmet/subsystems/" + nqnA, "l nvmet/ports/1/subsystems/" + nqnA + " -> nvmet/subsystems/" + nqnA})
	if got := h.Loops(); !slices.Equal(got, []string{"loop1=" + vb}) {
		t.Errorf("loops after closing zfsssh = %q", got)
	}
	if err := rb.Close("truenas"); err != nil {
		t.Fatal(err)
	}
	if tree := h.Tree(); len(withPrefix(tree, "d nvmet/")) != 0 || len(withPrefix(tree, "a nvmet/")) != 0 {
		t.Errorf("objects left after both owners closed: %q", tree)
	}
	if got := h.Loops(); len(got) != 0 {
		t.Errorf("loops left: %q", got)
	}
	if owners, err := ra.Owners(); err != nil || len(owners) != 0 {
		t.Errorf("Owners() = %v, %v; want none", owners, err)
	}
}

// A port that existed before (configured by hand) is used but never removed.
func TestNVMeForeignPortKept(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	if err := h.FS.Mkdir(h.ConfigFS + "/nvmet/ports/7"); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"addr_trtype": "tcp", "addr_adrfam": "ipv4", "addr_traddr": "127.0.0.1", "addr_trsvcid": "4420"} {
		os.WriteFile(h.ConfigFS+"/nvmet/ports/7/"+k, []byte(v+"\n"), 0o644)
	}
	vol := h.File("v.zvol", 1<<20)
	apply(t, r, "sim", State{NVMe: []Subsystem{{NQN: nqnA, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: vol}}, Listeners: []Listener{{Addr: "127.0.0.1"}}}}})
	hasLines(t, "configfs", h.Tree(), []string{"l nvmet/ports/7/subsystems/" + nqnA + " -> nvmet/subsystems/" + nqnA}, []string{"d nvmet/ports/1"})
	if err := r.Close("sim"); err != nil {
		t.Fatal(err)
	}
	hasLines(t, "after close", h.Tree(), []string{"d nvmet/ports/7"}, []string{"l nvmet/ports/7/subsystems/" + nqnA + " -> nvmet/subsystems/" + nqnA})
}

// A file grown through one simulator is refreshed by whichever owner
// applies next: both loop device and namespace follow.
func TestResizeSeenByAnyOwner(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	vol := h.File("grow.zvol", 8<<20)
	apply(t, r, "truenas", State{NVMe: []Subsystem{{NQN: nqnB, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: vol}}}}})
	h.Commands()
	if err := os.Truncate(vol, 16<<20); err != nil {
		t.Fatal(err)
	}
	apply(t, r, "zfsssh", State{})
	if cmds := kerneltest.Changing(h.Commands()); !slices.Equal(cmds, []string{"losetup -c /dev/loop0"}) {
		t.Errorf("commands = %q", cmds)
	}
	hasLines(t, "configfs", h.Tree(), []string{"a nvmet/subsystems/" + nqnB + "/namespaces/1/revalidate_size = 1"}, nil)
}

func TestIncremental(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	va, vb := h.File("a.img", 1<<20), h.File("b.img", 1<<20)
	// a previous run of the owner left a subsystem behind
	apply(t, r, "infinia", State{NVMe: []Subsystem{{NQN: "nqn.2024-01.com.ddn:stale", AllowAnyHost: true}}})
	inc := r.Incremental("infinia")
	lis := []Listener{{Addr: "127.0.0.1"}}
	if err := inc.PutSubsystem(Subsystem{NQN: nqnA, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: va}}, Listeners: lis}); err != nil {
		t.Fatal(err)
	}
	if err := inc.PutSubsystem(Subsystem{NQN: nqnB, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: vb}}, Listeners: lis}); err != nil {
		t.Fatal(err)
	}
	hasLines(t, "two puts", h.Tree(), []string{"d nvmet/subsystems/" + nqnA, "d nvmet/subsystems/" + nqnB}, []string{"d nvmet/subsystems/nqn.2024-01.com.ddn:stale"})
	// a failing put is not kept
	h.Fail("losetup", errFake)
	if err := inc.PutSubsystem(Subsystem{NQN: "nqn.2024-01.com.ddn:c", AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: h.File("c.img", 1<<20)}}}); err == nil {
		t.Fatal("put with a failing losetup succeeded")
	}
	h.Fail("losetup", nil)
	if err := inc.RemoveSubsystem(nqnA); err != nil {
		t.Fatal(err)
	}
	hasLines(t, "after remove", h.Tree(), []string{"d nvmet/subsystems/" + nqnB}, []string{"d nvmet/subsystems/" + nqnA, "d nvmet/subsystems/nqn.2024-01.com.ddn:c"})
	if err := inc.Close(); err != nil {
		t.Fatal(err)
	}
	if left := withPrefix(h.Tree(), "d nvmet/subsystems/"); len(left) != 0 {
		t.Errorf("left after Close: %q", left)
	}
}
