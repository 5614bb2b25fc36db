package infinia

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPersistence: a new server on the same directory has every object
// the first one made (volumes, subsystems, hosts, listeners, run-time
// additions), the same certificate, and issues new tokens; the seed is
// not applied again.
func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	s1, err := New(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s1.Close() })
	if err := s1.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := s1.AddService("clu1", "red", "red", ServiceSeed{Name: "extra"}); err != nil {
		t.Fatal(err)
	}
	c := loggedIn(t, s1)
	c.mkVolume("kept", 100)
	c.call("PUT", pathD+"/volumes/kept/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 2}}).must(t, 200)
	c.call("POST", pathP+"/subsystems/kept/hosts", map[string]any{"host_nqn": hostA}).must(t, 201)
	var before subsystemJSON
	c.call("GET", pathP+"/subsystems/kept", nil).must(t, 200).decode(t, &before)
	var vol struct{ Volume volume }
	c.call("GET", pathD+"/volumes/kept", nil).must(t, 200).decode(t, &vol)
	oldToken, cert := c.token, s1.CertPEM()
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".state-*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}

	// A seed that would make other objects is ignored on an existing state.
	s2 := startOn(t, Options{StateDir: dir, Seed: &Seed{}})
	if !bytes.Equal(s2.CertPEM(), cert) {
		t.Error("the certificate changed across restarts")
	}
	c2 := newClient(t, s2)
	c2.token = oldToken
	c2.call("GET", pathP, nil).must(t, 401)
	c2.login(DefaultUser, DefaultPassword, "clu1/red").must(t, 200)
	var after subsystemJSON
	c2.call("GET", pathP+"/subsystems/kept", nil).must(t, 200).decode(t, &after)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("subsystem changed:\n%+v\n%+v", before, after)
	}
	var vol2 struct{ Volume volume }
	c2.call("GET", pathD+"/volumes/kept", nil).must(t, 200).decode(t, &vol2)
	if !reflect.DeepEqual(vol, vol2) {
		t.Errorf("volume changed:\n%+v\n%+v", vol, vol2)
	}
	c2.call("GET", pathP+"/services/extra", nil).must(t, 200)
	// Volume ids keep counting.
	var v2 volume
	c2.call("POST", pathD+"/volumes", volBody("next", 1, "kept")).must(t, 201).decode(t, &v2)
	if v2.VolumeID != vol.Volume.VolumeID+1 || v2.NSID != 2 {
		t.Errorf("new volume %+v", v2)
	}
}

// TestNewErrors: New refuses a missing directory option and a damaged
// state file, naming the problem.
func TestNewErrors(t *testing.T) {
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, "state.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"no dir", Options{}, "StateDir is required"},
		{"damaged state", Options{StateDir: damaged}, "is damaged"},
		{"negative TTL", Options{StateDir: t.TempDir(), TokenTTL: -1}, "TokenTTL"},
		{"bad seed", Options{StateDir: t.TempDir(), Seed: &Seed{Accounts: []Account{{Level: "nope", User: "u", Password: "p"}}}}, "does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.o)
			if err == nil {
				s.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestMissingDataFile: at New, a volume whose data file is gone gets a
// new, empty one of its size, and a data file of no volume is removed.
func TestMissingDataFile(t *testing.T) {
	dir := t.TempDir()
	s1 := startOn(t, Options{StateDir: dir})
	c := loggedIn(t, s1)
	c.mkVolume("v", 10)
	var v struct{ Volume volume }
	c.call("GET", pathD+"/volumes/v", nil).must(t, 200).decode(t, &v)
	s1.Close()
	if err := os.Remove(s1.DataPath(v.Volume.UUID)); err != nil {
		t.Fatal(err)
	}
	orphan := s1.DataPath("0a9e4c1e-0000-4000-8000-000000000000")
	if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := startOn(t, Options{StateDir: dir})
	if fi, err := os.Stat(s2.DataPath(v.Volume.UUID)); err != nil || fi.Size() != 10*4096 {
		t.Fatalf("data file: %v %v", fi, err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphaned data file: %v", err)
	}
}

// TestClone: a clone copies the source's data, may be
// larger, and refuses what the contract refuses.
func TestClone(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.mkVolume("src", 1024) // 4 MiB
	var src struct{ Volume volume }
	c.call("GET", pathD+"/volumes/src", nil).must(t, 200).decode(t, &src)
	f, err := os.OpenFile(s.DataPath(src.Volume.UUID), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("head"), 0)
	f.WriteAt([]byte("tail"), 4<<20-4)
	f.Close()
	var cl volume
	c.call("POST", pathD+"/volumes/copy/clone", map[string]any{"srcVol": "src", "sizeInBytes": 5<<20 + 1}).must(t, 201).decode(t, &cl)
	if cl.NBlocks != 1281 || cl.Subsystem != "" || cl.UUID == src.Volume.UUID || cl.Xattrs["pvc"] != "src" {
		t.Errorf("clone %+v", cl)
	}
	data, err := os.ReadFile(s.DataPath(cl.UUID))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 1281*4096 || string(data[:4]) != "head" || string(data[4<<20-4:4<<20]) != "tail" {
		t.Errorf("clone data: %d bytes", len(data))
	}
	runSteps(t, c, []step{
		{"exists", "POST", pathD + "/volumes/copy/clone", map[string]any{"srcVol": "src"}, 409, "already exists"},
		{"no source", "POST", pathD + "/volumes/x/clone", map[string]any{"srcVol": "nope"}, 404, "volume red/csiService/nope not found"},
		{"no srcVol", "POST", pathD + "/volumes/x/clone", map[string]any{}, 400, "srcVol is required"},
		{"smaller", "POST", pathD + "/volumes/x/clone", map[string]any{"srcVol": "src", "sizeInBytes": 4096}, 400, "smaller than the source"},
		{"bad name", "POST", pathD + "/volumes/_x/clone", map[string]any{"srcVol": "src"}, 400, "is invalid"},
		{"into a subsystem", "POST", pathD + "/volumes/x/clone", map[string]any{"srcVol": "src", "nvmfTarget": "src"}, 201, "OK"},
	})
	var x struct{ Volume volume }
	c.call("GET", pathD+"/volumes/x", nil).must(t, 200).decode(t, &x)
	if x.Volume.Subsystem != "src" || x.Volume.NSID != 2 || x.Volume.NBlocks != 1024 {
		t.Errorf("clone in a subsystem: %+v", x.Volume)
	}
}
