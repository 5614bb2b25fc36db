package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
)

func TestNFSExports(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	src := h.Mkdir("model/mnt/tank/k8s/pvc-1")
	mp := filepath.Join(h.Dir, "tank/k8s/pvc-1")
	plain := h.Mkdir("srv/plain")
	st := State{NFS: []Export{
		{Path: mp, Source: src},
		{Path: plain, Options: "*(rw,no_root_squash,fsid=77) 10.0.0.0/8(ro)"},
	}}
	apply(t, r, "sim", st)
	got, err := os.ReadFile(filepath.Join(h.Dir, "exports.d", "switchyard-sim.exports"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), fmt.Sprintf("%s 127.0.0.0/8(rw,sync,no_root_squash,no_subtree_check,fsid=%d)\n", mp, fsidOf(mp))) ||
		!strings.Contains(string(got), fmt.Sprintf("%s *(rw,no_root_squash,fsid=77) 10.0.0.0/8(ro,fsid=%d)\n", plain, fsidOf(plain))) {
		t.Errorf("exports file:\n%s", got)
	}
	wantCmds := []string{
		"mkdir -p " + mp,
		"mount --bind " + src + " " + mp,
		"mount -t nfsd nfsd " + h.NFSD,
		"rpcbind",
		"exportfs -ra",
		"rpc.mountd",
		"rpc.nfsd 8",
		"rpc.statd",
	}
	if cmds := kerneltest.Changing(h.Commands()); !slices.Equal(cmds, wantCmds) {
		t.Errorf("commands:\n got %q\nwant %q", cmds, wantCmds)
	}
	if !slices.Contains(h.Mounts(), mp) {
		t.Errorf("%s is not mounted: %q", mp, h.Mounts())
	}

	apply(t, r, "sim", st)
	if cmds := h.Commands(); len(cmds) != 0 {
		t.Errorf("re-apply ran %q", cmds)
	}

	// The bound export goes: unexported first, then unmounted and its
	// mount point (made for it) removed.
	apply(t, r, "sim", State{NFS: st.NFS[1:]})
	if cmds := kerneltest.Changing(h.Commands()); !slices.Equal(cmds, []string{"exportfs -ra", "umount " + mp, "rmdir " + mp}) {
		t.Errorf("commands = %q", cmds)
	}
	if err := r.Close("sim"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "exports.d", "switchyard-sim.exports")); !os.IsNotExist(err) {
		t.Errorf("exports file left after Close (%v)", err)
	}
}

func TestExportClients(t *testing.T) {
	p := "/tank/a"
	id := fsidOf(p)
	for _, tc := range []struct {
		opts    string
		want    []string
		wantErr string
	}{
		{"", []string{fmt.Sprintf("127.0.0.0/8(rw,sync,no_root_squash,no_subtree_check,fsid=%d)", id)}, ""},
		{"ro,all_squash", []string{fmt.Sprintf("127.0.0.0/8(ro,all_squash,fsid=%d)", id)}, ""},
		{"*(rw,crossmnt) @net(ro,fsid=5)", []string{fmt.Sprintf("*(rw,crossmnt,fsid=%d)", id), "@net(ro,fsid=5)"}, ""},
		{"*(ro) host2", []string{fmt.Sprintf("*(ro,fsid=%d)", id), fmt.Sprintf("host2(fsid=%d)", id)}, ""},
		{"rw, ro", nil, "bare option list"},
		{"*(rw", nil, "not host(options)"},
	} {
		got, err := exportClients(Export{Path: p, Options: tc.opts})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v, want %q", tc.opts, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.opts, got, err, tc.want)
		}
	}
}

func TestSMBShares(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, map[string]string{"smbuser": "pa55-word"})
	src := h.Mkdir("model/mnt/tank/smb-1")
	mp := filepath.Join(h.Dir, "tank/smb-1")
	guest := h.Mkdir("srv/guest")
	st := State{SMB: []Share{
		{Name: "tank_smb_1", Path: mp, Source: src, Options: map[string]string{"Read Only": "yes"}},
		{Name: "guest", Path: guest, Guest: true},
	}}
	apply(t, r, "sim", st)
	conf := filepath.Join(h.Dir, "state", "samba", "smb.conf")
	cmds := kerneltest.Changing(h.Commands())
	wantCmds := []string{
		"mkdir -p " + mp,
		"mount --bind " + src + " " + mp,
		"useradd -M -s /usr/sbin/nologin smbuser",
		"smbpasswd -c " + conf + " -s -a smbuser",
		"smbd -D --configfile=" + conf,
	}
	if !slices.Equal(cmds, wantCmds) {
		t.Errorf("commands:\n got %q\nwant %q", cmds, wantCmds)
	}
	if in := h.Stdin("smbpasswd -c " + conf + " -s -a smbuser"); in != "pa55-word\npa55-word\n" {
		t.Errorf("smbpasswd stdin = %q", in)
	}
	main, _ := os.ReadFile(conf)
	include := filepath.Join(h.Dir, "state", "samba", "shares", "sim.conf")
	if !strings.Contains(string(main), "include = "+include+"\n") || !strings.Contains(string(main), "map to guest = bad user") {
		t.Errorf("smb.conf:\n%s", main)
	}
	inc, _ := os.ReadFile(include)
	for _, want := range []string{
		"[tank_smb_1]\n   path = " + mp + "\n",
		"   read only = yes\n", "   guest ok = no\n",
		"[guest]\n   path = " + guest + "\n", "   guest only = yes\n", "   force user = root\n",
	} {
		if !strings.Contains(string(inc), want) {
			t.Errorf("share file lacks %q:\n%s", want, inc)
		}
	}

	apply(t, r, "sim", st)
	if cmds := h.Commands(); len(cmds) != 0 {
		t.Errorf("re-apply ran %q", cmds)
	}
	apply(t, r, "sim", State{SMB: st.SMB[1:]})
	if cmds := kerneltest.Changing(h.Commands()); !slices.Equal(cmds, []string{"smbcontrol --configfile=" + conf + " smbd reload-config", "umount " + mp, "rmdir " + mp}) {
		t.Errorf("commands after dropping a share = %q", cmds)
	}
	if err := r.Close("sim"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(include); !os.IsNotExist(err) {
		t.Errorf("share include left after Close (%v)", err)
	}
	main, _ = os.ReadFile(conf)
	if strings.Contains(string(main), "include =") {
		t.Errorf("smb.conf still includes shares:\n%s", main)
	}
}

func TestMountConflicts(t *testing.T) {
	h := kerneltest.New(t)
	r := reconciler(h, nil)
	a, b := h.Mkdir("src/a"), h.Mkdir("src/b")
	mp := filepath.Join(h.Dir, "tank/x")
	apply(t, r, "one", State{NFS: []Export{{Path: mp, Source: a}}})
	err := r.Apply("two", State{SMB: []Share{{Name: "x", Path: mp, Source: b}}})
	if err == nil || !strings.Contains(err.Error(), mp+" is bind-mounted from "+a+" for one, not from "+b) {
		t.Errorf("err = %v", err)
	}
	// The same source is fine: one mount serves both.
	apply(t, r, "two", State{SMB: []Share{{Name: "x", Path: mp, Source: a}}})
	if n := strings.Count(strings.Join(h.Mounts(), "\n"), mp); n != 1 {
		t.Errorf("%s mounted %d times", mp, n)
	}
	if err := r.Close("one"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.Mounts(), mp) {
		t.Error("closing one owner unmounted what the other still shares")
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/t\011ab\134`: "/t\tab\\", `/x\12`: `/x\12`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// Two simulators share the VM's one smbd: the second, which finds smbd
// running, still adds its own SMB accounts before the reload (its users
// could not log in otherwise).
func TestSMBSecondSimulatorAddsItsUsers(t *testing.T) {
	h := kerneltest.New(t)
	first := reconciler(h, map[string]string{"admin": "dsm-pass"})
	second := reconciler(h, map[string]string{"zfsuser": "zfs-pass"})
	apply(t, first, "dsm", State{SMB: []Share{{Name: "dsm_1", Path: h.Mkdir("srv/dsm-1")}}})
	conf := filepath.Join(h.Dir, "state", "samba", "smb.conf")
	if cmds := kerneltest.Changing(h.Commands()); !slices.Contains(cmds, "smbd -D --configfile="+conf) {
		t.Fatalf("the first simulator did not start smbd: %q", cmds)
	}
	apply(t, second, "zfs", State{SMB: []Share{{Name: "zfs_1", Path: h.Mkdir("srv/zfs-1")}}})
	want := []string{
		"useradd -M -s /usr/sbin/nologin zfsuser",
		"smbpasswd -c " + conf + " -s -a zfsuser",
		"smbcontrol --configfile=" + conf + " smbd reload-config",
	}
	if cmds := kerneltest.Changing(h.Commands()); !slices.Equal(cmds, want) {
		t.Errorf("second simulator's commands:\n got %q\nwant %q", cmds, want)
	}
}
