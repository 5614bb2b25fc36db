package infinia

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// onDisk is the tree a restart would read: the snapshot with the journal
// replayed over it.
func onDisk(t *testing.T, dir string) *state {
	t.Helper()
	st, ok, err := store{dir: dir}.load()
	if err != nil || !ok {
		t.Fatalf("load: ok %v, %v", ok, err)
	}
	if _, err := (store{dir: dir}).replay(st); err != nil {
		t.Fatal(err)
	}
	return st
}

// sameTree fails unless the server's live tree is what a restart reads.
func sameTree(t *testing.T, s *Server, after string) {
	t.Helper()
	disk := onDisk(t, s.opts.StateDir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !reflect.DeepEqual(s.st, disk) {
		t.Fatalf("after %s the tree on disk differs from the live one", after)
	}
}

// TestJournalReplaysToTheTree: after each of 400 random REST calls
// (volumes, clones, resizes, exposes, hosts, subsystems, forced deletes,
// and the failures among them), the snapshot plus the journal is exactly
// the live tree, and a restart serves the same answers.
func TestJournalReplaysToTheTree(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	r := rand.New(rand.NewPCG(7, 16))
	name := func() string { return fmt.Sprintf("v%d", r.IntN(6)) }
	expose := func(i int) map[string]any {
		return map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": i}}
	}
	host := func() string { return fmt.Sprintf("nqn.2014-08.org.nvmexpress:uuid:host-%d", r.IntN(3)) }
	for i := range 400 {
		var method, path string
		var body any
		switch n := name(); r.IntN(11) {
		case 0:
			method, path, body = "POST", pathP+"/subsystems/"+n, map[string]any{"port": 4420 + r.IntN(2)}
		case 1, 2:
			target := n
			if r.IntN(4) == 0 {
				target = name()
			}
			method, path, body = "POST", pathD+"/volumes", volBody(n, int64(1+r.IntN(8)), target)
		case 3:
			method, path, body = "PUT", pathD+"/volumes/"+n+"/expose", expose(1+r.IntN(3))
		case 4:
			method, path = "DELETE", pathD+"/volumes/"+n+"/unexpose"
		case 5:
			method, path, body = "PUT", pathD+"/volumes/"+n+"/resize", map[string]any{"nblocks": 1 + r.IntN(16)}
		case 6:
			method, path, body = "POST", pathP+"/subsystems/"+n+"/hosts", map[string]any{"host_nqn": host()}
		case 7:
			method, path = "DELETE", pathP+"/subsystems/"+n+"/hosts/"+host()
		case 8:
			method, path = "DELETE", pathD+"/volumes/"+n+"?force="+fmt.Sprint(r.IntN(2) == 0)
		case 9:
			method, path = "DELETE", pathP+"/subsystems/"+n+"?force="+fmt.Sprint(r.IntN(2) == 0)
		case 10:
			method, path, body = "POST", pathD+"/volumes/"+n+"/clone", map[string]any{"srcVol": name(), "nvmfTarget": name()}
		}
		a := c.call(method, path, body)
		sameTree(t, s, fmt.Sprintf("call %d, %s %s (%d %s)", i, method, path, a.Status, a.Title))
	}
	lists := func(c *client) string {
		var b strings.Builder
		for _, p := range []string{pathD + "/volumes", pathP + "/list"} {
			fmt.Fprintf(&b, "%s\n", c.call("GET", p, nil).must(t, 200).Data)
		}
		return b.String()
	}
	before := lists(c)
	dir := s.opts.StateDir
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := startOn(t, Options{StateDir: dir})
	if after := lists(loggedIn(t, s2)); after != before {
		t.Errorf("after a restart the lists differ:\n%s\n%s", before, after)
	}
	// The restart folded the journal into the snapshot.
	if fi, err := os.Stat(filepath.Join(dir, journalName)); err != nil || fi.Size() != 0 {
		t.Errorf("journal after a restart: %v %v", fi, err)
	}
}

// TestJournalTornLine: a last line cut short (the process died inside
// its write) is dropped; a damaged line before it is an error naming the
// file and the line.
func TestJournalTornLine(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.mkVolume("kept", 8)
	dir := s.opts.StateDir
	want := onDisk(t, dir)
	s.Close()
	jp := filepath.Join(dir, journalName)
	good, err := os.ReadFile(jp)
	if err != nil || len(good) == 0 {
		t.Fatalf("journal: %d bytes, %v", len(good), err)
	}
	if err := os.WriteFile(jp, append(good, `{"next":99,"volumes":[{"c":"clu1"`...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, dir); !reflect.DeepEqual(got, want) {
		t.Error("a torn last line changed the tree")
	}
	if err := os.WriteFile(jp, append([]byte("{not json\n"), good...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{StateDir: dir})
	if err == nil || !strings.Contains(err.Error(), jp+" line 1 is damaged") {
		t.Errorf("New on a damaged journal: %v", err)
	}
}

// TestJournalCompacts: the change that takes the journal past
// compactAfter rewrites the snapshot and empties the journal; a crash
// between the two (the old journal and this change's line replayed over
// the new snapshot) changes nothing.
func TestJournalCompacts(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	dir := s.opts.StateDir
	jp := filepath.Join(dir, journalName)
	c.mkVolume("v", 8)
	var prev []byte
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the journal never compacted")
		}
		var err error
		if prev, err = os.ReadFile(jp); err != nil {
			t.Fatal(err)
		}
		host := fmt.Sprintf("nqn.2014-08.org.nvmexpress:uuid:h%d", i)
		c.call("POST", pathP+"/subsystems/v/hosts", map[string]any{"host_nqn": host}).must(t, 201)
		if fi, _ := os.Stat(jp); fi.Size() == 0 {
			break
		}
	}
	if len(prev) <= compactAfter-4096 {
		t.Errorf("compacted at %d bytes", len(prev))
	}
	sameTree(t, s, "the compaction")
	s.mu.Lock()
	obj, err := encodeObj(s.st.subtenant("clu1", "red", "red").Subsystems["v"])
	last, _ := json.Marshal(entry{Next: s.st.NextVolumeID, Subsystems: []objEntry{{C: "clu1", T: "red", S: "red", Name: "v", Obj: obj}}})
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, append(append(prev, last...), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	sameTree(t, s, "replaying the journal of before the compaction over the new snapshot")
}

// TestTargetFailureRollsBackTheTree: a failed change leaves the whole
// tree (not only what the REST answers show) and the disk as before.
func TestTargetFailureRollsBackTheTree(t *testing.T) {
	rec := &recordingTarget{}
	s := startServer(t, func(o *Options) { o.Target = rec })
	c := loggedIn(t, s)
	c.mkVolume("v", 8)
	c.mkVolume("u", 8)
	c.call("PUT", pathD+"/volumes/v/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}).must(t, 200)
	c.call("POST", pathP+"/subsystems/v/hosts", map[string]any{"host_nqn": hostA}).must(t, 201)
	before := onDisk(t, s.opts.StateDir)
	sameTree(t, s, "the set-up")
	rec.setFail(true)
	for _, tc := range []struct{ method, path string }{
		{"POST", pathD + "/volumes/w/clone"},
		{"DELETE", pathD + "/volumes/v?force=true"},
		{"DELETE", pathP + "/subsystems/v?force=true"},
		{"DELETE", pathP + "/subsystems/v/hosts/" + hostA},
		{"PUT", pathD + "/volumes/v/resize"},
	} {
		var body any
		switch {
		case strings.HasSuffix(tc.path, "/clone"):
			body = map[string]any{"srcVol": "v", "nvmfTarget": "u"}
		case strings.HasSuffix(tc.path, "/resize"):
			body = map[string]any{"nblocks": 32}
		}
		c.call(tc.method, tc.path, body).must(t, 500)
		s.mu.Lock()
		same := reflect.DeepEqual(s.st, before)
		s.mu.Unlock()
		if !same {
			t.Errorf("%s %s: the tree changed", tc.method, tc.path)
		}
		sameTree(t, s, tc.method+" "+tc.path)
	}
}
