package kernel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
)

const (
	iqnA  = "iqn.2003-01.org.linux-iscsi.sim:vol-a"
	iqnB  = "iqn.2003-01.org.linux-iscsi.sim:vol-b"
	initA = "iqn.1993-08.org.debian:01:node-a"
	initB = "iqn.1993-08.org.debian:01:node-b"
)

func TestISCSIDemoModeTarget(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	v0, v1 := h.File("l0.zvol", 32<<20), h.File("l1.img", 16<<20)
	st := State{ISCSI: []Target{{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: v0}, {LUN: 1, Path: v1}}, Portals: []Portal{{Addr: "127.0.0.1"}, {Addr: "::1", Port: 3261}}}}}
	apply(t, r, "sim", st)
	tpg := "target/iscsi/" + iqnA + "/tpgt_1"
	so0, so1 := "target/core/"+lioHBA+"/loop0", "target/core/"+lioHBA+"/loop1"
	tree := h.Tree()
	hasLines(t, "configfs", tree, []string{
		"a " + so0 + "/control = udev_path=/dev/loop0",
		"a " + so0 + "/udev_path = /dev/loop0",
		"a " + so0 + "/enable = 1",
		"l " + tpg + "/lun/lun_0/loop0 -> " + so0,
		"l " + tpg + "/lun/lun_1/loop1 -> " + so1,
		"d " + tpg + "/np/127.0.0.1:3260",
		"d " + tpg + "/np/[::1]:3261",
		"a " + tpg + "/attrib/authentication = 0",
		"a " + tpg + "/attrib/generate_node_acls = 1",
		"a " + tpg + "/attrib/cache_dynamic_acls = 1",
		"a " + tpg + "/attrib/demo_mode_write_protect = 0",
		"a " + tpg + "/enable = 1",
	}, nil)
	if len(withPrefix(tree, "a "+so0+"/wwn/vpd_unit_serial = ")) != 1 {
		t.Errorf("storage object without a unit serial: %q", withPrefix(tree, "a "+so0))
	}
	h.Commands()
	p := r.newPassForTest(t, "sim", st)
	if p.cfs.changes != 0 || p.ran != 0 || len(p.errs) > 0 {
		t.Errorf("re-apply: %d changes, %d commands, %v", p.cfs.changes, p.ran, p.errs)
	}
}

func TestISCSIACLsAndCHAP(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	v0 := h.File("l0.zvol", 8<<20)
	chap := &CHAP{User: "chapuser", Secret: "s3cret-0123456", MutualUser: "tgt", MutualSecret: "mutual-s3cret99"}
	tg := Target{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: v0}}, Portals: []Portal{{Addr: "127.0.0.1"}}, CHAP: chap, InitiatorACLs: []string{initA, initB}}
	apply(t, r, "sim", State{ISCSI: []Target{tg}})
	tpg := "target/iscsi/" + iqnA + "/tpgt_1"
	hasLines(t, "with ACLs", h.Tree(), []string{
		"a " + tpg + "/attrib/authentication = 1",
		"a " + tpg + "/attrib/generate_node_acls = 0",
		"l " + tpg + "/acls/" + initA + "/lun_0/lun -> " + tpg + "/lun/lun_0",
		"l " + tpg + "/acls/" + initB + "/lun_0/lun -> " + tpg + "/lun/lun_0",
		"a " + tpg + "/acls/" + initA + "/auth/userid = chapuser",
		"a " + tpg + "/acls/" + initA + "/auth/password = s3cret-0123456",
		"a " + tpg + "/acls/" + initA + "/auth/password_mutual = mutual-s3cret99",
	}, nil)
	ledger, err := os.ReadFile(filepath.Join(h.Dir, "state", ledgerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{chap.Secret, chap.MutualSecret} {
		if strings.Contains(string(ledger), secret) {
			t.Errorf("the ledger holds a CHAP secret:\n%s", ledger)
		}
	}

	// One initiator leaves; then back to demo mode without CHAP.
	tg.InitiatorACLs = []string{initB}
	apply(t, r, "sim", State{ISCSI: []Target{tg}})
	hasLines(t, "one ACL", h.Tree(), []string{"d " + tpg + "/acls/" + initB}, []string{"d " + tpg + "/acls/" + initA})
	// Closed with no initiator left (a volume published to no node):
	// no ACL and no demo mode, so nobody gets in.
	tg.InitiatorACLs, tg.Closed = nil, true
	apply(t, r, "sim", State{ISCSI: []Target{tg}})
	hasLines(t, "closed, no ACLs", h.Tree(), []string{"a " + tpg + "/attrib/generate_node_acls = 0", "a " + tpg + "/attrib/cache_dynamic_acls = 0"},
		[]string{"d " + tpg + "/acls/" + initB})
	tg.InitiatorACLs, tg.CHAP, tg.Closed = nil, nil, false
	apply(t, r, "sim", State{ISCSI: []Target{tg}})
	tree := h.Tree()
	hasLines(t, "demo mode", tree, []string{"a " + tpg + "/attrib/authentication = 0", "a " + tpg + "/attrib/generate_node_acls = 1"},
		[]string{"d " + tpg + "/acls/" + initB})
	if acl := withPrefix(tree, "d "+tpg+"/acls/"); len(acl) != 0 {
		t.Errorf("ACLs left: %q", acl)
	}
}

func TestISCSILUNChangesAndSharedStorageObject(t *testing.T) {
	h := kerneltest.New(t)
	ra, rb := reconciler(h, nil), reconciler(h, nil)
	shared, other := h.File("shared.zvol", 8<<20), h.File("other.zvol", 8<<20)
	ta := Target{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: shared}}, Portals: []Portal{{Addr: "127.0.0.1"}}, InitiatorACLs: []string{initA}}
	apply(t, ra, "a", State{ISCSI: []Target{ta}})
	apply(t, rb, "b", State{ISCSI: []Target{{IQN: iqnB, LUNs: []LUN{{LUN: 3, Path: shared}}, Portals: []Portal{{Addr: "127.0.0.1"}}}}})
	so := "target/core/" + lioHBA + "/loop0"
	hasLines(t, "shared object", h.Tree(), []string{
		"l target/iscsi/" + iqnA + "/tpgt_1/lun/lun_0/loop0 -> " + so,
		"l target/iscsi/" + iqnB + "/tpgt_1/lun/lun_3/loop0 -> " + so,
	}, nil)
	if got := h.Loops(); len(got) != 1 {
		t.Fatalf("one file, one loop device: %q", got)
	}

	// LUN 0 of a now serves another file: its ACL mapping is redone.
	ta.LUNs = []LUN{{LUN: 0, Path: other}}
	apply(t, ra, "a", State{ISCSI: []Target{ta}})
	tpg := "target/iscsi/" + iqnA + "/tpgt_1"
	hasLines(t, "LUN swapped", h.Tree(), []string{
		"l " + tpg + "/lun/lun_0/loop1 -> target/core/" + lioHBA + "/loop1",
		"l " + tpg + "/acls/" + initA + "/lun_0/lun -> " + tpg + "/lun/lun_0",
		"d " + so, // b still uses it
	}, []string{"l " + tpg + "/lun/lun_0/loop0 -> " + so})

	if err := rb.Close("b"); err != nil {
		t.Fatal(err)
	}
	hasLines(t, "b closed", h.Tree(), nil, []string{"d " + so, "d target/iscsi/" + iqnB})
	if err := ra.Close("a"); err != nil {
		t.Fatal(err)
	}
	if left := withPrefix(h.Tree(), "d target/"); !slices.Equal(left, []string{"d target/iscsi"}) {
		t.Errorf("left after closing all: %q", left)
	}
	if got := h.Loops(); len(got) != 0 {
		t.Errorf("loops left: %q", got)
	}
}

// A LUN's unit serial is the owner's when it gives one, so a target
// restored after the storage host reboots is the same LUN to initiators;
// a serial LIO would refuse is refused before the kernel is touched.
func TestISCSIUnitSerial(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	v0, v1 := h.File("l0.zvol", 32<<20), h.File("l1.zvol", 32<<20)
	const serial = "be5c404e-3436-b1f1-f3aa-563a4486bf50"
	st := State{ISCSI: []Target{{IQN: iqnA, LUNs: []LUN{{LUN: 0, Path: v0, Serial: serial}, {LUN: 1, Path: v1}}, Portals: []Portal{{Addr: "127.0.0.1"}}}}}
	apply(t, r, "sim", st)
	so0, so1 := "target/core/"+lioHBA+"/loop0", "target/core/"+lioHBA+"/loop1"
	tree := h.Tree()
	hasLines(t, "configfs", tree, []string{"a " + so0 + "/wwn/vpd_unit_serial = " + serial}, nil)
	if got := withPrefix(tree, "a "+so1+"/wwn/vpd_unit_serial = "); len(got) != 1 || strings.HasSuffix(got[0], " = ") {
		t.Errorf("the LUN without a serial got %q, want a fresh one", got)
	}
	for _, bad := range []string{"has space", strings.Repeat("x", maxUnitSerial+1), "tab\there"} {
		st := State{ISCSI: []Target{{IQN: iqnB, LUNs: []LUN{{LUN: 0, Path: v0, Serial: bad}}}}}
		if err := r.Apply("other", st); err == nil || !strings.Contains(err.Error(), "unit serial") {
			t.Errorf("serial %q: err = %v, want a refusal naming the unit serial", bad, err)
		}
	}
}
