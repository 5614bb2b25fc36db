package sharing

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// kernelEnv re-registers the service of e with a Kernel on a kerneltest
// host, after a stand-in pool.dataset.update (the storage package's) that
// sets volsize.
func kernelEnv(t *testing.T, version string) (*env, *kerneltest.Host) {
	t.Helper()
	e := newEnv(t, version)
	kh := kerneltest.New(t)
	k := kernel.New(kernel.Options{ConfigFS: kh.ConfigFS, SysFS: kh.SysFS, MountInfo: kh.MountInfo, StateDir: kh.StateDir,
		ExportsDir: kh.ExportsDir, NFSD: kh.NFSD, SMBAddr: kh.SMBAddr, FS: kh.FS, Exec: kh.Exec})
	e.r = middleware.NewRegistry()
	e.r.Add(middleware.Method{Name: "pool.dataset.update", Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		var ds string
		var data map[string]any
		json.Unmarshal(params[0], &ds)
		json.Unmarshal(params[1], &data)
		return nil, e.m.SetProperty(ds, "volsize", data["volsize"].(string))
	}})
	s, err := Register(e.r, e.m, e.v, Options{StateDir: e.state, Hostname: "nas1", Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	t.Cleanup(func() { s.Close() })
	e.configureISCSI()
	return e, kh
}

func TestKernelFollowsSharing(t *testing.T) {
	e, kh := kernelEnv(t, "25.10")
	zvol, _ := e.m.ZvolPath("tank/vol")
	zvol2, _ := e.m.ZvolPath("tank/vol2")

	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a", "maproot_user": "root", "networks": []any{"127.0.0.0/8"}})
	e.must("sharing.smb.create", map[string]any{"name": "guestshare", "path": "/mnt/tank/b", "purpose": "LEGACY_SHARE", "options": map[string]any{"guestok": true}})
	e.must("iscsi.auth.create", map[string]any{"tag": 1, "user": "chapuser", "secret": "chapsecret12"})
	ig := e.must("iscsi.initiator.create", map[string]any{"initiators": []any{"iqn.1993-08.org.debian:01:node-a"}})
	tgt := e.must("iscsi.target.create", map[string]any{"name": "pvc-1", "groups": []any{map[string]any{"portal": 1, "initiator": id(ig), "authmethod": "CHAP", "auth": 1}}})
	ext := e.must("iscsi.extent.create", map[string]any{"name": "pvc-1", "disk": "zvol/tank/vol"})
	e.must("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext), "lunid": 0})
	sub := e.must("nvmet.subsys.create", map[string]any{"name": "pvc-2", "allow_any_host": true})
	port := e.must("nvmet.port.create", map[string]any{"addr_trtype": "TCP", "addr_traddr": "127.0.0.1", "addr_trsvcid": 4420})
	e.must("nvmet.port_subsys.create", map[string]any{"port_id": id(port), "subsys_id": id(sub)})
	ns := e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(sub), "device_type": "ZVOL", "device_path": "zvol/tank/vol2"})

	iqn := "iqn.2005-10.org.freenas.ctl:pvc-1"
	tpg := "target/iscsi/" + iqn + "/tpgt_1"
	nqn := sub["subnqn"].(string)
	tree := kh.Tree()
	for _, want := range []string{
		"d " + tpg + "/np/0.0.0.0:3260",
		"a " + tpg + "/attrib/authentication = 1",
		"a " + tpg + "/acls/iqn.1993-08.org.debian:01:node-a/auth/userid = chapuser",
		"l " + tpg + "/acls/iqn.1993-08.org.debian:01:node-a/lun_0/lun -> " + tpg + "/lun/lun_0",
		"a nvmet/subsystems/" + nqn + "/namespaces/1/enable = 1",
		"a nvmet/subsystems/" + nqn + "/namespaces/1/device_uuid = " + ns["device_uuid"].(string),
		"l nvmet/ports/1/subsystems/" + nqn + " -> nvmet/subsystems/" + nqn,
	} {
		if !slices.Contains(tree, want) {
			t.Errorf("configfs lacks %q:\n  %s", want, strings.Join(tree, "\n  "))
		}
	}
	if loops := kh.Loops(); !slices.Contains(loops, "loop0="+zvol) || !slices.Contains(loops, "loop1="+zvol2) {
		t.Errorf("loops = %q", loops)
	}
	exports, _ := os.ReadFile(filepath.Join(kh.ExportsDir, "switchyard-truenas-nas1.exports"))
	if !strings.Contains(string(exports), "/mnt/tank/a 127.0.0.0/8(rw,no_subtree_check,no_root_squash,fsid=") {
		t.Errorf("exports:\n%s", exports)
	}
	shares, _ := os.ReadFile(filepath.Join(kh.StateDir, "samba", "shares", "truenas-nas1.conf"))
	if !strings.Contains(string(shares), "[guestshare]\n   path = /mnt/tank/b\n") || !strings.Contains(string(shares), "guest ok = yes") {
		t.Errorf("smb shares:\n%s", shares)
	}

	// A volsize change through pool.dataset.update reaches the namespace.
	kh.Commands()
	e.must("pool.dataset.update", "tank/vol2", map[string]any{"volsize": "2M"})
	if cmds := kerneltest.Changing(kh.Commands()); !slices.Equal(cmds, []string{"losetup -c /dev/loop1"}) {
		t.Errorf("after the resize: commands %q", cmds)
	}
	if !slices.Contains(kh.Tree(), "a nvmet/subsystems/"+nqn+"/namespaces/1/revalidate_size = 1") {
		t.Error("the namespace was not revalidated after the resize")
	}

	// Deleting the zvol's dataset removes its extent and namespace, and
	// the kernel lets go of them before the data goes.
	if err := e.r.DatasetDeleted(&middleware.Call{Ctx: context.Background()}, "tank/vol"); err != nil {
		t.Fatal(err)
	}
	tree = kh.Tree()
	if slices.ContainsFunc(tree, func(l string) bool { return strings.HasPrefix(l, "d "+tpg+"/lun/") }) {
		t.Errorf("LUN left after its dataset went: %q", tree)
	}
	if loops := kh.Loops(); slices.Contains(loops, "loop0="+zvol) {
		t.Errorf("loop device of the deleted zvol left: %q", loops)
	}

	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := kh.Tree(); slices.ContainsFunc(left, func(l string) bool {
		return strings.HasPrefix(l, "d nvmet/subsystems/") || strings.HasPrefix(l, "d target/iscsi/")
	}) {
		t.Errorf("left after Close: %q", left)
	}
}

func TestKernelRefusalFailsTheCall(t *testing.T) {
	e, kh := kernelEnv(t, "25.04")
	kh.Fail("mount", errors.New("exit status 32: mount: /mnt/tank/a: permission denied"))
	_, err := e.call("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a"})
	wantCallError(t, err, middleware.EFAULT, "Failed to apply the sharing configuration: kernel: owner truenas-nas1: bind-mounting")
	// Re-registering on the same state serves what is stored once the
	// kernel works again.
	kh.Fail("mount", nil)
	k := kernel.New(kernel.Options{ConfigFS: kh.ConfigFS, SysFS: kh.SysFS, MountInfo: kh.MountInfo, StateDir: kh.StateDir,
		ExportsDir: kh.ExportsDir, NFSD: kh.NFSD, SMBAddr: kh.SMBAddr, FS: kh.FS, Exec: kh.Exec})
	if _, err := Register(middleware.NewRegistry(), e.m, e.v, Options{StateDir: e.state, Hostname: "nas1", Kernel: k}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kh.Mounts(), "/mnt/tank/a") {
		t.Errorf("the stored share is not served after a restart: mounts %q", kh.Mounts())
	}
}

func TestNFSClients(t *testing.T) {
	root := "root"
	for _, tc := range []struct {
		row  middleware.Row
		want string
	}{
		{middleware.Row{}, "*(rw,no_subtree_check,root_squash)"},
		{middleware.Row{"ro": true, "maproot_user": root, "hosts": []any{"h1"}, "networks": []any{"10.0.0.0/8"}}, "h1(ro,no_subtree_check,no_root_squash) 10.0.0.0/8(ro,no_subtree_check,no_root_squash)"},
		{middleware.Row{"mapall_user": "root", "security": []any{"SYS", "KRB5"}}, "*(rw,no_subtree_check,sec=sys:krb5,all_squash,anonuid=0,anongid=0)"},
	} {
		if got := nfsClients(tc.row); got != tc.want {
			t.Errorf("nfsClients(%v) = %q, want %q", tc.row, got, tc.want)
		}
	}
}

// TestKernelInitiatorAccess: how a target's groups admit initiators, as
// the middleware renders them: no group, nobody (no target in LIO); a
// group whose initiator group lists IQNs, those as static ACLs; an empty
// list ("Allow All initiators"), or a list that reads back empty, every
// initiator (demo mode).
func TestKernelInitiatorAccess(t *testing.T) {
	e, kh := kernelEnv(t, "25.10")
	iqn := "iqn.2005-10.org.freenas.ctl:pvc-1"
	tpg := "target/iscsi/" + iqn + "/tpgt_1"
	tgt := e.must("iscsi.target.create", map[string]any{"name": "pvc-1", "groups": []any{}})
	ext := e.must("iscsi.extent.create", map[string]any{"name": "pvc-1", "disk": "zvol/tank/vol"})
	e.must("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext), "lunid": 0})
	has := func(line string) bool { return slices.Contains(kh.Tree(), line) }
	if slices.ContainsFunc(kh.Tree(), func(l string) bool { return strings.Contains(l, iqn) }) {
		t.Errorf("a target without groups is served: %q", kh.Tree())
	}

	ig := e.must("iscsi.initiator.create", map[string]any{"initiators": []any{"iqn.1993-08.org.debian:01:node-a  iqn.1993-08.org.debian:01:node-b"}, "comment": "two"})
	if got := strsOf(ig["initiators"]); !slices.Equal(got, []string{"iqn.1993-08.org.debian:01:node-a", "iqn.1993-08.org.debian:01:node-b"}) {
		t.Errorf("initiators read back as %q (the middleware splits its text at whitespace)", got)
	}
	e.must("iscsi.target.update", id(tgt), map[string]any{"groups": []any{map[string]any{"portal": 1, "initiator": id(ig)}}})
	for _, want := range []string{
		"a " + tpg + "/attrib/generate_node_acls = 0",
		"l " + tpg + "/acls/iqn.1993-08.org.debian:01:node-a/lun_0/lun -> " + tpg + "/lun/lun_0",
		"l " + tpg + "/acls/iqn.1993-08.org.debian:01:node-b/lun_0/lun -> " + tpg + "/lun/lun_0",
	} {
		if !has(want) {
			t.Errorf("configfs lacks %q:\n  %s", want, strings.Join(kh.Tree(), "\n  "))
		}
	}

	for _, list := range [][]any{{}, {"ALL"}} {
		got := e.must("iscsi.initiator.update", id(ig), map[string]any{"initiators": list})
		if l := strsOf(got["initiators"]); len(l) != 0 {
			t.Errorf("initiators %q read back as %q, want [] (every initiator)", list, l)
		}
		if !has("a " + tpg + "/attrib/generate_node_acls = 1") {
			t.Errorf("initiators %q: the target is not open to every initiator:\n  %s", list, strings.Join(kh.Tree(), "\n  "))
		}
	}

	// Deleting an initiator group a target names leaves the target's
	// group without one (ON DELETE SET NULL): every initiator.
	e.must("iscsi.initiator.update", id(ig), map[string]any{"initiators": []any{"iqn.1993-08.org.debian:01:node-a"}})
	if _, err := e.call("iscsi.initiator.delete", id(ig)); err != nil {
		t.Fatal(err)
	}
	if g := objs(e.must("iscsi.target.get_instance", id(tgt))["groups"]); len(g) != 1 || g[0]["initiator"] != nil {
		t.Errorf("groups after the initiator group went: %v", g)
	}
	if !has("a " + tpg + "/attrib/generate_node_acls = 1") {
		t.Error("a target whose initiator group was deleted is not open")
	}
}
