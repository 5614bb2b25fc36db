package synology

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

type env struct {
	t   *testing.T
	srv *Server
	hc  *http.Client
	sid string
}

func start(t *testing.T, o Options) *env {
	t.Helper()
	o.StateDir = t.TempDir()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return &env{t: t, srv: s, hc: hc}
}

type answer struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   struct {
		Code int `json:"code"`
	} `json:"error"`
}

// get sends a GET as democratic-csi does: everything in the query string,
// the sid as _sid.
func (e *env) get(cgi string, p map[string]string) answer {
	e.t.Helper()
	q := url.Values{}
	for k, v := range p {
		q.Set(k, v)
	}
	if e.sid != "" && q.Get("_sid") == "" {
		q.Set("_sid", e.sid)
	}
	resp, err := e.hc.Get(e.srv.URL() + "/webapi/" + cgi + "?" + q.Encode())
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("status %d", resp.StatusCode)
	}
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) ok(cgi string, p map[string]string, into any) {
	e.t.Helper()
	a := e.get(cgi, p)
	if !a.Success {
		e.t.Fatalf("%v: error %d", p, a.Error.Code)
	}
	if into != nil {
		if err := json.Unmarshal(a.Data, into); err != nil {
			e.t.Fatalf("%s: %v", a.Data, err)
		}
	}
}

func (e *env) code(cgi string, p map[string]string) int {
	e.t.Helper()
	a := e.get(cgi, p)
	if a.Success {
		e.t.Fatalf("%v succeeded", p)
	}
	return a.Error.Code
}

func (e *env) login() {
	var d struct{ Sid string }
	e.ok("auth.cgi", map[string]string{"api": "SYNO.API.Auth", "version": "6", "method": "login", "account": DefaultUser,
		"passwd": DefaultPassword, "session": "democratic-csi", "format": "sid"}, &d)
	if d.Sid == "" {
		e.t.Fatal("no sid")
	}
	e.sid = d.Sid
}

func TestAuth(t *testing.T) {
	e := start(t, Options{})
	var info map[string]struct {
		Path       string
		MaxVersion int
	}
	e.ok("query.cgi", map[string]string{"api": "SYNO.API.Info", "version": "1", "method": "query", "query": "SYNO.API.Auth,SYNO.Core.ISCSI.LUN"}, &info)
	if info["SYNO.API.Auth"].MaxVersion != 7 || info["SYNO.Core.ISCSI.LUN"].Path != "entry.cgi" || len(info) != 2 {
		t.Fatalf("info %+v", info)
	}
	lunList := map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "list"}
	if c := e.code("entry.cgi", lunList); c != codeSIDNotFound {
		t.Fatalf("no sid: %d", c)
	}
	if c := e.code("auth.cgi", map[string]string{"api": "SYNO.API.Auth", "version": "6", "method": "login", "account": "admin", "passwd": "wrong", "format": "sid"}); c != 400 {
		t.Fatalf("wrong password: %d", c)
	}
	for p, want := range map[string]int{"api": codeNoSuchAPI, "method": codeNoSuchMethod, "version": codeVersion} {
		q := map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "list"}
		q[p] = map[string]string{"api": "SYNO.Nope", "method": "nope", "version": "9"}[p]
		if c := e.code("entry.cgi", q); c != want {
			t.Errorf("bad %s: %d, want %d", p, c, want)
		}
	}
	e.login()
	e.ok("entry.cgi", lunList, nil)
	// synology-csi sends the sid as the cookie "id".
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL()+"/webapi/entry.cgi?api=SYNO.Core.ISCSI.LUN&version=1&method=list", nil)
	req.AddCookie(&http.Cookie{Name: "id", Value: e.sid})
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	_ = json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if !a.Success {
		t.Fatalf("cookie sid refused: %d", a.Error.Code)
	}
	e.srv.ExpireSessions()
	if c := e.code("entry.cgi", lunList); c != codeSessionTimeout {
		t.Fatalf("expired session: %d", c)
	}
	if c := e.code("entry.cgi", lunList); c != codeSIDNotFound {
		t.Fatalf("forgotten session: %d", c)
	}
	e.login()
	e.ok("entry.cgi", map[string]string{"api": "SYNO.API.Auth", "version": "1", "method": "logout"}, nil)
	if c := e.code("entry.cgi", lunList); c != codeSIDNotFound {
		t.Fatalf("after logout: %d", c)
	}
}

// TestLunLifecycle drives the calls democratic-csi makes for a volume,
// a snapshot and clones, with its parameter encodings.
func TestLunLifecycle(t *testing.T) {
	e := start(t, Options{Volumes: []Volume{{Path: "/volume1", Size: 10 << 30}}, DeleteDelay: 100 * time.Millisecond})
	e.login()
	lun := func(method string, p map[string]string) map[string]string {
		q := map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": method}
		for k, v := range p {
			q[k] = v
		}
		return q
	}
	var created struct{ UUID string }
	e.ok("entry.cgi", lun("create", map[string]string{"name": "pvc-1", "location": "/volume1", "size": strconv.Itoa(1 << 30), "type": "BLUN",
		"dev_attribs": `[{"dev_attrib":"emulate_tpu","enable":1}]`}), &created)
	if c := e.code("entry.cgi", lun("create", map[string]string{"name": "pvc-1", "location": "/volume1", "size": "1024"})); c != codeISCSILunExists {
		t.Fatalf("duplicate: %d", c)
	}
	if c := e.code("entry.cgi", lun("create", map[string]string{"name": "pvc-2", "location": "/volume1", "size": strconv.Itoa(20 << 30)})); c != codeISCSINoSpace {
		t.Fatalf("too big: %d", c)
	}
	long := make([]byte, MaxLunName+1)
	for i := range long {
		long[i] = 'a'
	}
	if c := e.code("entry.cgi", lun("create", map[string]string{"name": string(long), "location": "/volume1", "size": "1024"})); c != codeInvalidParam {
		t.Fatalf("long name: %d", c)
	}
	if c := e.code("entry.cgi", lun("create", map[string]string{"name": "x", "location": "/volume1", "size": "1024", "type": "THIN"})); c != 18990318 {
		t.Fatalf("ext4 type on btrfs: %d", c)
	}
	var vol struct {
		Volume struct {
			SizeFreeByte string `json:"size_free_byte"`
		}
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.Storage.Volume", "version": "1", "method": "get", "volume_path": "/volume1"}, &vol)
	if vol.Volume.SizeFreeByte != strconv.Itoa(9<<30) {
		t.Fatalf("free %s", vol.Volume.SizeFreeByte)
	}
	var tgt struct {
		TargetID int `json:"target_id"`
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "create", "name": "pvc-1",
		"iqn": "iqn.2000-01.com.synology:csi.pvc-1", "auth_type": "0", "max_sessions": "0"}, &tgt)
	if c := e.code("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "create", "name": "other",
		"iqn": "iqn.2000-01.com.synology:csi.pvc-1"}); c != codeISCSITargetExists {
		t.Fatalf("duplicate target: %d", c)
	}
	e.ok("entry.cgi", lun("map_target", map[string]string{"uuid": strconv.Quote(created.UUID), "target_ids": "[" + strconv.Itoa(tgt.TargetID) + "]"}), nil)
	var targets struct {
		Targets []struct {
			IQN        string `json:"iqn"`
			MappedLuns []struct {
				LunUUID string `json:"lun_uuid"`
				Index   int    `json:"mapping_index"`
			} `json:"mapped_luns"`
		}
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "list",
		"additional": `["mapped_lun", "status", "acls", "connected_sessions"]`}, &targets)
	if len(targets.Targets) != 1 || len(targets.Targets[0].MappedLuns) != 1 || targets.Targets[0].MappedLuns[0].LunUUID != created.UUID || targets.Targets[0].MappedLuns[0].Index != 1 {
		t.Fatalf("targets %+v", targets)
	}
	// expand as democratic-csi does
	e.ok("entry.cgi", lun("set", map[string]string{"uuid": strconv.Quote(created.UUID), "new_size": strconv.Itoa(2 << 30)}), nil)
	if c := e.code("entry.cgi", lun("set", map[string]string{"uuid": strconv.Quote(created.UUID), "new_size": "1024"})); c != codeInvalidParam {
		t.Fatalf("shrink: %d", c)
	}
	e.ok("entry.cgi", lun("take_snapshot", map[string]string{"src_lun_uuid": strconv.Quote(created.UUID), "taken_by": "democratic-csi",
		"description": "snap-1", "is_locked": "true", "is_app_consistent": "true"}), nil)
	var snaps struct {
		Snapshots []struct {
			UUID        string `json:"uuid"`
			Description string `json:"description"`
			ParentUUID  string `json:"parent_uuid"`
			TotalSize   int64  `json:"total_size"`
			Time        int64  `json:"time"`
		}
	}
	e.ok("entry.cgi", lun("list_snapshot", map[string]string{"src_lun_uuid": strconv.Quote(created.UUID)}), &snaps)
	if len(snaps.Snapshots) != 1 || snaps.Snapshots[0].Description != "snap-1" || snaps.Snapshots[0].TotalSize != 2<<30 || snaps.Snapshots[0].Time == 0 {
		t.Fatalf("snapshots %+v", snaps)
	}
	var fromSnap struct {
		UUID string `json:"cloned_lun_uuid"`
	}
	e.ok("entry.cgi", lun("clone_snapshot", map[string]string{"src_lun_uuid": strconv.Quote(created.UUID), "snapshot_uuid": strconv.Quote(snaps.Snapshots[0].UUID),
		"cloned_lun_name": "pvc-from-snap", "clone_type": "democratic-csi"}), &fromSnap)
	var clone struct {
		UUID string `json:"dst_lun_uuid"`
	}
	e.ok("entry.cgi", lun("clone", map[string]string{"src_lun_uuid": strconv.Quote(created.UUID), "dst_lun_name": "pvc-clone", "dst_location": "/volume1",
		"is_same_pool": "true", "clone_type": "democratic-csi"}), &clone)
	if fromSnap.UUID == "" || clone.UUID == "" {
		t.Fatal("clone uuids missing")
	}
	e.ok("entry.cgi", lun("delete_snapshot", map[string]string{"snapshot_uuid": strconv.Quote(snaps.Snapshots[0].UUID), "deleted_by": "democratic_csi"}), nil)
	if c := e.code("entry.cgi", lun("delete_snapshot", map[string]string{"snapshot_uuid": strconv.Quote(snaps.Snapshots[0].UUID)})); c != codeISCSINoSuchSnap {
		t.Fatalf("snapshot twice: %d", c)
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "delete", "target_id": strconv.Quote(strconv.Itoa(tgt.TargetID))}, nil)
	if c := e.code("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "delete", "target_id": `"99"`}); c != codeISCSINoSuchTarget {
		t.Fatalf("missing target: %d", c)
	}
	// democratic-csi's delete: uuid "" and the list uuids; asynchronous.
	e.ok("entry.cgi", lun("delete", map[string]string{"uuid": `""`, "uuids": `["` + created.UUID + `"]`, "is_soft_feas_ignored": "true"}), nil)
	var got struct{ Lun struct{ Status string } }
	e.ok("entry.cgi", lun("get", map[string]string{"uuid": strconv.Quote(created.UUID)}), &got)
	if got.Lun.Status != "deleting" {
		t.Fatalf("status right after delete: %q", got.Lun.Status)
	}
	time.Sleep(300 * time.Millisecond)
	if c := e.code("entry.cgi", lun("get", map[string]string{"uuid": strconv.Quote(created.UUID)})); c != codeISCSINoSuchLun {
		t.Fatalf("after the delay: %d", c)
	}
}

// TestShares drives synology-csi's share calls.
func TestShares(t *testing.T) {
	e := start(t, Options{})
	e.login()
	share := func(api, method string, p map[string]string) map[string]string {
		q := map[string]string{"api": api, "version": "1", "method": method}
		for k, v := range p {
			q[k] = v
		}
		return q
	}
	e.ok("entry.cgi", share("SYNO.Core.Share", "create", map[string]string{"name": `"k8s-csi-a"`,
		"shareinfo": `{"name":"k8s-csi-a","vol_path":"/volume1","desc":"x","enable_share_cow":false,"enable_recycle_bin":true,"share_quota":1024}`}), nil)
	if c := e.code("entry.cgi", share("SYNO.Core.Share", "create", map[string]string{"name": `"k8s-csi-a"`, "shareinfo": `{"name":"k8s-csi-a","vol_path":"/volume1"}`})); c != codeShareExists {
		t.Fatalf("duplicate share: %d", c)
	}
	if c := e.code("entry.cgi", share("SYNO.Core.Share", "create", map[string]string{"name": `"abcdefghijklmnopqrstuvwxyz0123456"`, "shareinfo": `{"vol_path":"/volume1"}`})); c != codeShareBadInput {
		t.Fatalf("33-character name: %d", c)
	}
	var got struct {
		Name  string `json:"name"`
		Quota int64  `json:"quota_value"`
		UUID  string `json:"uuid"`
	}
	e.ok("entry.cgi", share("SYNO.Core.Share", "get", map[string]string{"name": `"k8s-csi-a"`}), &got)
	if got.Quota != 1024 || got.UUID == "" {
		t.Fatalf("share %+v", got)
	}
	e.ok("entry.cgi", share("SYNO.Core.Share", "set", map[string]string{"name": `"k8s-csi-a"`, "shareinfo": `{"name":"k8s-csi-a","vol_path":"/volume1","share_quota":2048}`}), nil)
	e.ok("entry.cgi", share("SYNO.Core.FileServ.NFS.SharePrivilege", "save", map[string]string{"share_name": `"k8s-csi-a"`,
		"rule": `[{"async":true,"client":"10.0.0.0/8","crossmnt":true,"insecure":true,"privilege":"rw","root_squash":"no","security_flavor":{"sys":true}}]`}), nil)
	var priv struct{ Rule []struct{ Client string } }
	e.ok("entry.cgi", share("SYNO.Core.FileServ.NFS.SharePrivilege", "load", map[string]string{"share_name": `"k8s-csi-a"`}), &priv)
	if len(priv.Rule) != 1 || priv.Rule[0].Client != "10.0.0.0/8" {
		t.Fatalf("rules %+v", priv)
	}
	e.ok("entry.cgi", share("SYNO.Core.Share.Permission", "set", map[string]string{"name": `"k8s-csi-a"`, "user_group_type": `"local_user"`,
		"permissions": `[{"name":"admin","is_readonly":false,"is_writable":true,"is_deny":false}]`}), nil)
	var snap string
	e.ok("entry.cgi", share("SYNO.Core.Share.Snapshot", "create", map[string]string{"name": `"k8s-csi-a"`, "snapinfo": `{"desc":"s","lock":true}`}), &snap)
	e.ok("entry.cgi", share("SYNO.Core.Share", "clone", map[string]string{"name": `"k8s-csi-b"`, "snapshot": strconv.Quote(snap),
		"shareinfo": `{"name":"k8s-csi-b","vol_path":"/volume1","name_org":"k8s-csi-a"}`}), nil)
	if c := e.code("entry.cgi", share("SYNO.Core.Share", "clone", map[string]string{"name": `"k8s-csi-c"`, "snapshot": `"GMT+00-1999.01.01-00.00.00"`,
		"shareinfo": `{"name":"k8s-csi-c","vol_path":"/volume1","name_org":"k8s-csi-a"}`})); c != codeShareGeneric {
		t.Fatalf("clone of a missing snapshot: %d", c)
	}
	e.ok("entry.cgi", share("SYNO.Core.Share", "get", map[string]string{"name": `"k8s-csi-b"`}), &got)
	if got.Quota != 2048 {
		t.Fatalf("clone quota %d", got.Quota)
	}
	e.ok("entry.cgi", share("SYNO.Core.Share.Snapshot", "delete", map[string]string{"name": `"k8s-csi-a"`, "snapshots": "[" + strconv.Quote(snap) + "]"}), nil)
	e.ok("entry.cgi", share("SYNO.Core.Share", "delete", map[string]string{"name": `["k8s-csi-a"]`}), nil)
	if c := e.code("entry.cgi", share("SYNO.Core.Share", "get", map[string]string{"name": `"k8s-csi-a"`})); c != codeShareNoSuch {
		t.Fatalf("deleted share: %d", c)
	}
}
