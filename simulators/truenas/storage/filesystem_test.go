package storage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestSetpermChangesDirectory(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, v)
			e.mkfs("tank/a", nil)
			e.mkfs("tank/a/child", nil)
			dir, ok := e.m.HostPath("/tank/a")
			if !ok {
				t.Fatal("no host directory")
			}
			sub := filepath.Join(dir, "sub")
			if err := os.Mkdir(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			e.progress = nil
			if res := e.must("filesystem.setperm", map[string]any{"path": "/mnt/tank/a", "mode": "0777",
				"uid": 1001, "gid": 1002, "options": map[string]any{"recursive": true}}); res != nil {
				t.Errorf("setperm returned %v", res)
			}
			for _, p := range []string{dir, sub} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o777 {
					t.Errorf("%s mode %v, want 0777", p, fi.Mode().Perm())
				}
				if os.Geteuid() == 0 {
					if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1001 || st.Gid != 1002 {
						t.Errorf("%s owner %d:%d, want 1001:1002", p, st.Uid, st.Gid)
					}
				}
			}
			childDir, _ := e.m.HostPath("/tank/a/child")
			if fi, _ := os.Stat(childDir); fi.Mode().Perm() == 0o777 {
				t.Error("recursive setperm crossed into a child dataset without traverse")
			}
			if len(e.progress) == 0 || e.progress[len(e.progress)-1] != 100 {
				t.Errorf("job progress %v", e.progress)
			}
			st := obj(t, e.must("filesystem.stat", "/mnt/tank/a"))
			if st["type"] != "DIRECTORY" || uint32(st["mode"].(float64))&0o777 != 0o777 || st["is_mountpoint"] != true ||
				st["realpath"] != "/mnt/tank/a" {
				t.Errorf("stat: %v", st)
			}
			if os.Geteuid() == 0 && (st["uid"] != 1001.0 || st["gid"] != 1002.0) {
				t.Errorf("stat owner %v:%v", st["uid"], st["gid"])
			}
			if st := obj(t, e.must("filesystem.stat", "/mnt/tank/a/sub")); st["is_mountpoint"] != false {
				t.Errorf("sub is a mountpoint: %v", st)
			}
			e.must("filesystem.chown", map[string]any{"path": "/mnt/tank/a/sub", "uid": 0})
			if fi, _ := os.Stat(sub); os.Geteuid() == 0 && fi.Sys().(*syscall.Stat_t).Uid != 0 {
				t.Error("chown did not change the owner")
			}
		})
	}
}

func TestFilesystemErrors(t *testing.T) {
	for _, v := range versions {
		e := newEnv(t, v)
		e.mkfs("tank/a", nil)
		e.mkfs("tank/ro", map[string]any{"readonly": "ON"})
		cases := []struct {
			method    string
			body      any
			attr, msg string
			errno     int
			only      bool // 25.04+ (pydantic models)
		}{
			{method: "filesystem.setperm", body: map[string]any{"path": "/etc", "mode": "755"}, attr: "filesystem.setperm.path",
				msg: "Changes to permissions on paths that are not beneath the directory /mnt are not permitted: /etc"},
			{method: "filesystem.setperm", body: map[string]any{"path": "/mnt/tank", "mode": "755"}, attr: "filesystem.setperm.path",
				msg: `The specified path is a ZFS pool mountpoint "(/mnt/tank)" `},
			{method: "filesystem.setperm", body: map[string]any{"path": "/mnt/tank/ro", "mode": "755"}, attr: "filesystem.setperm.path",
				msg: "/mnt/tank/ro: dataset underlying path has the readonly property enabled."},
			{method: "filesystem.setperm", body: map[string]any{"path": "/mnt/tank/nope", "mode": "755"}, errno: middleware.ENOENT,
				msg: "Path /mnt/tank/nope not found"},
			{method: "filesystem.setperm", body: map[string]any{"path": "/mnt/tank/a", "mode": "000"}, attr: "filesystem.setperm.mode",
				msg: "Empty permissions are not permitted."},
			{method: "filesystem.setperm", body: map[string]any{"path": "/mnt/tank/a", "mode": "999"}, msg: "octal",
				attr: map[bool]string{true: "filesystem_setperm.mode", false: "filesystem_permission.mode"}[mwAtLeast(v, 25, 4)]},
			{method: "filesystem.setperm", body: map[string]any{"path": "/mnt/tank/a"}, attr: "filesystem_setperm",
				msg: "Payload must either explicitly specify permissions or contain the stripacl option.", only: true},
			{method: "filesystem.chown", body: map[string]any{"path": "/mnt/tank/a"}, attr: "filesystem_chown",
				msg: "At least one of uid, gid, user, and group must be set in chown payload", only: true},
			{method: "filesystem.chown", body: map[string]any{"path": "/mnt/tank/a", "user": "nobody42"}, attr: "filesystem.chown.user",
				msg: "nobody42: user does not exist", only: true},
			{method: "filesystem.stat", body: "/mnt/tank/a/missing", errno: middleware.ENOENT, msg: "Path /mnt/tank/a/missing not found"},
		}
		for _, c := range cases {
			if c.only && !mwAtLeast(v, 25, 4) {
				continue
			}
			_, err := e.call(c.method, c.body)
			if c.attr != "" {
				wantValidation(t, err, c.attr, c.msg)
			} else {
				wantCallError(t, err, c.errno, c.msg)
			}
		}
		if !mwAtLeast(v, 25, 4) {
			_, err := e.call("filesystem.chown", map[string]any{"path": "/mnt/tank/a"})
			wantValidation(t, err, "filesystem.chown.uid", "Please specify either user or group to change.")
		}
	}
}

func mwAtLeast(v string, y, m int) bool {
	ver, _ := middleware.ParseVersion(v)
	return ver.AtLeast(y, m, 0)
}

// TestPoolMountedUnderMnt: when whoever runs the simulator mounts the pool
// at /mnt/<pool> (as TrueNAS's altroot shows it), paths are not prefixed
// twice and the filesystem methods still find the directories.
func TestPoolMountedUnderMnt(t *testing.T) {
	e := newEnv(t, "25.10")
	if err := e.m.SetProperty("tank", "mountpoint", "/mnt/tank"); err != nil {
		t.Fatal(err)
	}
	ent := e.mkfs("tank/a", nil)
	if ent["mountpoint"] != "/mnt/tank/a" {
		t.Fatalf("mountpoint %v", ent["mountpoint"])
	}
	e.must("filesystem.setperm", map[string]any{"path": "/mnt/tank/a", "mode": "750"})
	st := obj(t, e.must("filesystem.stat", "/mnt/tank/a"))
	if uint32(st["mode"].(float64))&0o777 != 0o750 || st["is_mountpoint"] != true {
		t.Errorf("stat %v", st)
	}
	_, err := e.call("pool.dataset.create", map[string]any{"name": "tank/a"})
	wantValidation(t, err, "pool_dataset_create.name", "Path /mnt/tank/a already exists")
}
