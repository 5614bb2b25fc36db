package zfsssh

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// kernelEnv is a server on the real ZFS model whose Kernel works on a
// kerneltest host.
func kernelEnv(t *testing.T) (*testEnv, *kerneltest.Host, *zfsmodel.Model) {
	t.Helper()
	model, err := zfsmodel.Open(zfsmodel.Options{StateDir: t.TempDir(), Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 10 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	kh := kerneltest.New(t)
	k := kernel.New(kernel.Options{ConfigFS: kh.ConfigFS, SysFS: kh.SysFS, MountInfo: kh.MountInfo, StateDir: kh.StateDir,
		ExportsDir: kh.ExportsDir, NFSD: kh.NFSD, SMBAddr: kh.SMBAddr, FS: kh.FS, Exec: kh.Exec})
	o := Options{Host: model, Users: defaultUsers(), Kernel: k, Hostname: "zhost",
		NVMetPorts: []NVMetPort{{ID: 1, Trtype: "tcp", Adrfam: "ipv4", Traddr: "127.0.0.1", Trsvcid: "4420"}}}
	srv, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, srv: srv, addr: addr.String(), opts: o}
	t.Cleanup(func() { srv.Close() })
	return e, kh, model
}

func mustRun(t *testing.T, e *testEnv, cmd string) result {
	t.Helper()
	r := runOn(t, e.client("root"), cmd, "", false)
	if r.code != 0 || r.err != nil {
		t.Fatalf("%s: %+v", cmd, r)
	}
	return r
}

func TestKernelFollowsTheModels(t *testing.T) {
	e, kh, model := kernelEnv(t)
	mustRun(t, e, "zfs create -p -V 64M tank/k8s/pvc-1 && zfs create -V 32M tank/k8s/pvc-2")
	mustRun(t, e, dcsiCommand(nvmeCreateScript("pvc-1", "tank/k8s/pvc-1"), "nvmetcli", false))
	mustRun(t, e, dcsiCommand(iscsiCreateScript("pvc-2", "tank/k8s/pvc-2"), "targetcli", false))
	mustRun(t, e, "zfs create -o sharenfs=rw,no_subtree_check,no_root_squash tank/k8s/pvc-3 && zfs create -o sharesmb=on tank/k8s/pvc-4")

	zvol1, _ := model.ZvolPath("tank/k8s/pvc-1")
	zvol2, _ := model.ZvolPath("tank/k8s/pvc-2")
	nqn, iqn := nqnBase+":pvc-1", iqnBase+":pvc-2"
	tree := kh.Tree()
	for _, want := range []string{
		"a nvmet/subsystems/" + nqn + "/attr_allow_any_host = 1",
		"a nvmet/subsystems/" + nqn + "/namespaces/1/enable = 1",
		"l nvmet/ports/1/subsystems/" + nqn + " -> nvmet/subsystems/" + nqn,
		"a nvmet/ports/1/addr_traddr = 127.0.0.1",
		"a target/iscsi/" + iqn + "/tpgt_1/enable = 1",
		"a target/iscsi/" + iqn + "/tpgt_1/attrib/generate_node_acls = 1",
		"d target/iscsi/" + iqn + "/tpgt_1/np/0.0.0.0:3260", // targetcli's [::0], as the wildcard
	} {
		if !slices.Contains(tree, want) {
			t.Errorf("configfs lacks %q:\n  %s", want, strings.Join(tree, "\n  "))
		}
	}
	loops := kh.Loops()
	if !slices.Contains(loops, "loop0="+zvol1) || !slices.Contains(loops, "loop1="+zvol2) {
		t.Errorf("loops = %q, want the zvols' files", loops)
	}
	// The backstore's wwn is the LUN's unit serial: a host restoring its
	// targets after a reboot keeps the LUN's identity.
	if sos := e.srv.LIO().StorageObjects; len(sos) != 1 || !slices.Contains(tree, "a target/core/iblock_7373/loop1/wwn/vpd_unit_serial = "+sos[0].WWN) {
		t.Errorf("the unit serial is not the backstore's wwn (%+v): %q", sos, tree)
	}
	exports, _ := os.ReadFile(filepath.Join(kh.ExportsDir, "switchyard-zfsssh-zhost.exports"))
	if !strings.Contains(string(exports), "/tank/k8s/pvc-3 *(sec=sys,rw,no_subtree_check,mountpoint,no_subtree_check,no_root_squash,fsid=") {
		t.Errorf("exports:\n%s", exports)
	}
	src, _ := model.HostPath("/tank/k8s/pvc-3")
	if !slices.Contains(kh.Commands(), "mount --bind "+src+" /tank/k8s/pvc-3") {
		t.Error("the dataset's directory is not bind-mounted at its mountpoint")
	}
	shares, _ := os.ReadFile(filepath.Join(kh.StateDir, "samba", "shares", "zfsssh-zhost.conf"))
	if !strings.Contains(string(shares), "[tank_k8s_pvc_4]\n   path = /tank/k8s/pvc-4\n") {
		t.Errorf("smb shares:\n%s", shares)
	}

	// A shared filesystem renamed is exported at its new mountpoint.
	mustRun(t, e, "zfs rename tank/k8s/pvc-3 tank/k8s/pvc-3b")
	exports, _ = os.ReadFile(filepath.Join(kh.ExportsDir, "switchyard-zfsssh-zhost.exports"))
	if !strings.Contains(string(exports), "/tank/k8s/pvc-3b *(") || strings.Contains(string(exports), "/tank/k8s/pvc-3 *(") {
		t.Errorf("exports after the rename:\n%s", exports)
	}

	// Unsharing and deleting take it all away again; so does Close for the
	// rest.
	mustRun(t, e, dcsiCommand(nvmeDeleteScript("pvc-1"), "nvmetcli", false))
	mustRun(t, e, "zfs inherit sharenfs tank/k8s/pvc-3b")
	tree = kh.Tree()
	if slices.ContainsFunc(tree, func(l string) bool { return strings.Contains(l, nqn) }) {
		t.Errorf("subsystem left after the delete script: %q", tree)
	}
	if _, err := os.Stat(filepath.Join(kh.ExportsDir, "switchyard-zfsssh-zhost.exports")); !os.IsNotExist(err) {
		t.Errorf("exports left after zfs inherit sharenfs (%v)", err)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if left := kh.Tree(); slices.ContainsFunc(left, func(l string) bool { return strings.HasPrefix(l, "d target/iscsi/") }) {
		t.Errorf("target left after Close: %q", left)
	}
	if got := kh.Loops(); len(got) != 0 {
		t.Errorf("loops left after Close: %q", got)
	}
}

func TestKernelRefusalFailsTheCommand(t *testing.T) {
	e, kh, _ := kernelEnv(t)
	mustRun(t, e, "zfs create -p -V 64M tank/k8s/pvc-1 && zfs create -p tank/k8s/fs")
	kh.Fail("losetup", errors.New("exit status 1: losetup: cannot find an unused loop device"))
	r := runOn(t, e.client("root"), dcsiCommand(nvmeCreateScript("pvc-1", "tank/k8s/pvc-1"), "nvmetcli", false), "", false)
	if r.code != 1 || !strings.Contains(r.stderr, "nvmetcli: the kernel refused the configuration: kernel: owner zfsssh-zhost:") ||
		!strings.Contains(r.stderr, "cannot find an unused loop device") {
		t.Errorf("nvmetcli with a failing kernel: %+v", r)
	}
	kh.Fail("losetup", nil)
	kh.Fail("mount", errors.New("exit status 32: mount: permission denied"))
	r = runOn(t, e.client("root"), "zfs set sharenfs=on tank/k8s/fs", "", false)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "cannot share 'tank/k8s/fs': kernel: owner zfsssh-zhost:") || !strings.Contains(r.stderr, "permission denied") {
		t.Errorf("zfs set sharenfs with a failing mount: %+v", r)
	}
	// Read-only commands never touch the kernel, so they still work.
	if r := runOn(t, e.client("root"), "zfs list -H -o name tank/k8s/fs", "", false); r.code != 0 {
		t.Errorf("zfs list failed with the kernel failing: %+v", r)
	}
	// Once the kernel works again the next change brings everything in.
	kh.Fail("mount", nil)
	mustRun(t, e, "zfs set sharesmb=on tank/k8s/fs")
	if tree := kh.Tree(); !slices.Contains(tree, "a nvmet/subsystems/"+nqnBase+":pvc-1/namespaces/1/enable = 1") {
		t.Errorf("the namespace did not come back: %q", tree)
	}
}

func TestLinuxExportOptions(t *testing.T) {
	base := "no_subtree_check,mountpoint"
	for _, tc := range []struct{ in, want, err string }{
		{"on", "*(sec=sys,rw," + base + ",crossmnt)", ""},
		{"rw,no_root_squash", "*(sec=sys,rw," + base + ",no_root_squash)", ""},
		{"rw=@10.0.0.0/8:host1,ro,root_squash", "10.0.0.0/8(sec=sys,rw," + base + ",root_squash) host1(sec=sys,rw," + base + ",root_squash) *(sec=sys,ro," + base + ",root_squash)", ""},
		{"sec=krb5,rw=[::1]:[fd00::]/8", "::1(sec=krb5,rw," + base + ") fd00::/8(sec=krb5,rw," + base + ")", ""},
		{"anon=1000,nosub,rw", "*(sec=sys,rw," + base + ",anonuid=1000,subtree_check)", ""},
		{"no_root_squash", "", ""},
		{"rw,bogus", "", `unknown option "bogus"`},
	} {
		got, err := linuxExportOptions(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q:\n got %q, %v\nwant %q", tc.in, got, err, tc.want)
		}
	}
}

func TestSMBShareName(t *testing.T) {
	if got := smbShareName("tank/k8s/pvc-1a:b c"); got != "tank_k8s_pvc_1a_b_c" {
		t.Errorf("smbShareName = %q", got)
	}
}

// TestKernelClosedTargets: targets made closed (generate_node_acls=0,
// allow_any_host=0) reach configfs closed, with exactly the initiators
// their ACLs and allowed_hosts name, and none while they name none.
func TestKernelClosedTargets(t *testing.T) {
	e, kh, _ := kernelEnv(t)
	mustRun(t, e, "zfs create -p -V 64M tank/k8s/pvc-1 && zfs create -V 32M tank/k8s/pvc-2")
	closedISCSI := strings.Replace(iscsiCreateScript("pvc-2", "tank/k8s/pvc-2"), "generate_node_acls=1", "generate_node_acls=0", 1)
	closedNVMe := strings.Replace(nvmeCreateScript("pvc-1", "tank/k8s/pvc-1"), "allow_any_host=1", "allow_any_host=0", 1)
	mustRun(t, e, dcsiCommand(closedNVMe, "nvmetcli", false))
	mustRun(t, e, dcsiCommand(closedISCSI, "targetcli", false))
	nqn, iqn := nqnBase+":pvc-1", iqnBase+":pvc-2"
	tpg := "target/iscsi/" + iqn + "/tpgt_1"
	const ini, host = "iqn.1993-08.org.debian:01:node-a", "nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000a"
	has := func(step string, want, not []string) {
		t.Helper()
		tree := kh.Tree()
		for _, w := range want {
			if !slices.Contains(tree, w) {
				t.Errorf("%s: configfs lacks %q:\n  %s", step, w, strings.Join(tree, "\n  "))
			}
		}
		for _, w := range not {
			if slices.Contains(tree, w) {
				t.Errorf("%s: configfs has %q", step, w)
			}
		}
	}
	has("no grants", []string{"a nvmet/subsystems/" + nqn + "/attr_allow_any_host = 0", "a " + tpg + "/attrib/generate_node_acls = 0"},
		[]string{"d " + tpg + "/acls/" + ini, "l nvmet/subsystems/" + nqn + "/allowed_hosts/" + host + " -> nvmet/hosts/" + host})
	mustRun(t, e, dcsiCommand("/iscsi/"+iqn+"/tpg1/acls create wwn="+ini+" add_mapped_luns=true\n", "targetcli", false))
	mustRun(t, e, dcsiCommand("/hosts create "+host+"\n/subsystems/"+nqn+"/allowed_hosts create "+host+"\n", "nvmetcli", false))
	has("granted", []string{"a " + tpg + "/attrib/generate_node_acls = 0", "l " + tpg + "/acls/" + ini + "/lun_0/lun -> " + tpg + "/lun/lun_0",
		"l nvmet/subsystems/" + nqn + "/allowed_hosts/" + host + " -> nvmet/hosts/" + host, "a nvmet/subsystems/" + nqn + "/attr_allow_any_host = 0"}, nil)
	mustRun(t, e, dcsiCommand("/iscsi/"+iqn+"/tpg1/acls delete "+ini+"\n", "targetcli", false))
	mustRun(t, e, dcsiCommand("/subsystems/"+nqn+"/allowed_hosts delete "+host+"\n", "nvmetcli", false))
	has("revoked", []string{"a " + tpg + "/attrib/generate_node_acls = 0", "a nvmet/subsystems/" + nqn + "/attr_allow_any_host = 0"},
		[]string{"d " + tpg + "/acls/" + ini, "l nvmet/subsystems/" + nqn + "/allowed_hosts/" + host + " -> nvmet/hosts/" + host})
}
