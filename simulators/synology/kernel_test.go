package synology

import (
	"os"
	"strings"
	"testing"
)

// TestKernelState: what the kernel would serve follows the API's state:
// mapped LUNs as iSCSI LUNs of their target (with CHAP), shares with NFS
// rules as exports at /volume1/<name>, the others over SMB.
func TestKernelState(t *testing.T) {
	e := start(t, Options{DeleteDelay: -1})
	e.login()
	var lun struct{ UUID string }
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "create", "name": "l1", "location": "/volume1", "size": "1048576"}, &lun)
	var tgt struct {
		TargetID int `json:"target_id"`
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "create", "name": "t1", "iqn": "iqn.2000-01.com.synology:t1",
		"auth_type": "1", "user": "u", "password": "0123456789ab"}, &tgt)
	if c := e.code("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "create", "name": "t2", "iqn": "iqn.2000-01.com.synology:t2",
		"auth_type": "1", "user": "u", "password": "short"}); c != codeISCSIBadAuth {
		t.Fatalf("short CHAP secret: %d", c)
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "map_target", "uuid": `"` + lun.UUID + `"`, "target_ids": "[1]"}, nil)
	for _, n := range []string{"nfs1", "smb1"} {
		e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.Share", "version": "1", "method": "create", "name": `"` + n + `"`, "shareinfo": `{"name":"` + n + `","vol_path":"/volume1","share_quota":10}`}, nil)
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.FileServ.NFS.SharePrivilege", "version": "1", "method": "save", "share_name": `"nfs1"`,
		"rule": `[{"client":"127.0.0.0/8","privilege":"rw","root_squash":"no","async":false,"insecure":true,"crossmnt":true}]`}, nil)

	e.srv.mu.Lock()
	ks := e.srv.kernelState()
	e.srv.mu.Unlock()
	if len(ks.ISCSI) != 1 || ks.ISCSI[0].IQN != "iqn.2000-01.com.synology:t1" || len(ks.ISCSI[0].LUNs) != 1 ||
		ks.ISCSI[0].LUNs[0].LUN != 1 || ks.ISCSI[0].LUNs[0].Path != e.srv.LUNPath(lun.UUID) || ks.ISCSI[0].CHAP == nil || ks.ISCSI[0].CHAP.User != "u" {
		t.Fatalf("iSCSI %+v", ks.ISCSI)
	}
	if fi, err := os.Stat(e.srv.LUNPath(lun.UUID)); err != nil || fi.Size() != 1<<20 {
		t.Fatalf("LUN file: %v %v", fi, err)
	}
	if len(ks.NFS) != 1 || ks.NFS[0].Path != "/volume1/nfs1" || ks.NFS[0].Source != e.srv.ShareDir("/volume1", "nfs1") ||
		!strings.Contains(ks.NFS[0].Options, "127.0.0.0/8(rw,") || !strings.Contains(ks.NFS[0].Options, "no_root_squash") {
		t.Fatalf("NFS %+v", ks.NFS)
	}
	// DSM keeps crossmnt; the kernel export leaves it out (kernel.go).
	if strings.Contains(ks.NFS[0].Options, "crossmnt") {
		t.Errorf("NFS export options %q: crossmnt crashed the VM's rpc.mountd", ks.NFS[0].Options)
	}
	if len(ks.SMB) != 1 || ks.SMB[0].Name != "smb1" || !ks.SMB[0].Guest {
		t.Fatalf("SMB %+v", ks.SMB)
	}
	// a deleted LUN leaves the target at once (DeleteDelay < 0: at once)
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "delete", "uuid": `"` + lun.UUID + `"`}, nil)
	e.srv.mu.Lock()
	ks = e.srv.kernelState()
	e.srv.mu.Unlock()
	if len(ks.ISCSI[0].LUNs) != 0 {
		t.Fatalf("deleted LUN still served: %+v", ks.ISCSI)
	}
	if _, err := os.Stat(e.srv.LUNPath(lun.UUID)); !os.IsNotExist(err) {
		t.Fatalf("LUN file left: %v", err)
	}
}

// TestRestart: the state survives a restart on the same directory; the
// sessions do not.
func TestRestart(t *testing.T) {
	e := start(t, Options{})
	e.login()
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "create", "name": "keep", "location": "/volume1", "size": "4096"}, nil)
	dir := e.srv.opts.StateDir
	e.srv.Close()
	s2, err := New(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	e.srv = s2
	if c := e.code("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "list"}); c != codeSIDNotFound {
		t.Fatalf("old sid after restart: %d", c)
	}
	e.login()
	var l struct{ Luns []struct{ Name string } }
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "list"}, &l)
	if len(l.Luns) != 1 || l.Luns[0].Name != "keep" {
		t.Fatalf("after restart %+v", l)
	}
}
