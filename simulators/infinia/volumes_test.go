package infinia

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// step is one call of a scripted scenario and what it must answer.
type step struct {
	name         string
	method, path string
	body         any
	want         int
	title        string // a substring of the answer's title
}

func runSteps(t *testing.T, c *client, steps []step) {
	t.Helper()
	for _, st := range steps {
		a := c.call(st.method, st.path, st.body)
		if a.Status != st.want || !strings.Contains(a.Title, st.title) {
			t.Errorf("%s: %s %s: %d %q, want %d %q", st.name, st.method, st.path, a.Status, a.Title, st.want, st.title)
		}
		if a.Status >= 400 && string(a.Data) != "null" {
			t.Errorf("%s: error data %s, want null", st.name, a.Data)
		}
	}
}

// TestVolumeRoutes: every volume route's success and error answers, in
// the order a driver makes them.
func TestVolumeRoutes(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/ss1", map[string]any{"transport": "TCP", "reqInstances": []int{1, 2}, "port": 4420}).must(t, 201)
	vol := pathD + "/volumes/vol1"
	runSteps(t, c, []step{
		{"get absent", "GET", vol, nil, 404, "volume red/csiService/vol1 not found"},
		{"create", "POST", pathD + "/volumes", volBody("vol1", 256, "ss1"), 201, "OK"},
		{"create again", "POST", pathD + "/volumes", volBody("vol1", 256, "ss1"), 409, "volume red/csiService/vol1 already exists"},
		{"nblocks 0", "POST", pathD + "/volumes", volBody("v2", 0, "ss1"), 400, "nblocks must be > 0"},
		{"nblocks negative", "POST", pathD + "/volumes", volBody("v2", -4, "ss1"), 400, "nblocks must be > 0"},
		{"nblocks huge", "POST", pathD + "/volumes", volBody("v2", 1<<62, "ss1"), 400, "must not exceed"},
		{"nblocks not a number", "POST", pathD + "/volumes", `{"volumeName":"v2","nblocks":"ten","nvmfTarget":"ss1"}`, 400, "nblocks must be a JSON integer"},
		{"block size", "POST", pathD + "/volumes", map[string]any{"volumeName": "v2", "nblocks": 8, "block_size": 1024, "nvmfTarget": "ss1"}, 400, "block_size must be 512 or 4096"},
		{"bad name", "POST", pathD + "/volumes", volBody("-v2", 8, "ss1"), 400, `volumeName "-v2" is invalid`},
		{"long name", "POST", pathD + "/volumes", volBody(strings.Repeat("a", 129), 8, "ss1"), 400, "is invalid"},
		{"no target", "POST", pathD + "/volumes", volBody("v2", 8, ""), 400, "nvmfTarget is required"},
		{"unknown target", "POST", pathD + "/volumes", volBody("v2", 8, "nope"), 404, "subsystem red/nope not found"},
		{"transport", "POST", pathD + "/volumes", map[string]any{"volumeName": "v2", "nblocks": 8, "nvmfTarget": "ss1", "nvmfProp": map[string]any{"transport": "RDMA"}}, 400, "nvmfProp.transport must be TCP"},
		{"bad JSON", "POST", pathD + "/volumes", `{"volumeName":`, 400, "invalid JSON body"},
		{"no body", "POST", pathD + "/volumes", nil, 400, "JSON request body is required"},
		{"unknown dataset", "POST", pathP + "/datasets/nope/volumes", volBody("v2", 8, "ss1"), 404, "dataset red/nope not found"},
		{"unknown subtenant", "POST", pathT + "/subtenants/nope/datasets/csiService/volumes", volBody("v2", 8, "ss1"), 404, "subtenant red/nope not found"},
		{"get", "GET", vol, nil, 200, "OK"},
		{"resize", "PUT", vol + "/resize", map[string]any{"nblocks": 512}, 200, "OK"},
		{"resize same", "PUT", vol + "/resize", map[string]any{"nblocks": 512}, 200, "OK"},
		{"shrink", "PUT", vol + "/resize", map[string]any{"nblocks": 100}, 400, "shrinking is not supported"},
		{"resize 0", "PUT", vol + "/resize", map[string]any{"nblocks": 0}, 400, "nblocks must be > 0"},
		{"resize absent", "PUT", pathD + "/volumes/nope/resize", map[string]any{"nblocks": 600}, 404, "not found"},
		{"expose 1", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}, 200, "OK"},
		{"expose 1 again", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}, 200, "OK"},
		{"expose 2", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "tcp", "instanceId": 2}}, 200, "OK"},
		{"expose outside reqInstances", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 3}}, 400, "not one of subsystem red/ss1's reqInstances"},
		{"expose unknown instance", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 9}}, 404, "instance 9 not found"},
		{"expose RDMA", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "RDMA", "instanceId": 1}}, 400, "nvmf.transport must be TCP"},
		{"expose no nvmf", "PUT", vol + "/expose", map[string]any{}, 400, "nvmf is required"},
		{"expose no instance", "PUT", vol + "/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP"}}, 400, "nvmf.instanceId is required"},
		{"grant a host", "POST", pathP + "/subsystems/ss1/hosts", map[string]any{"host_nqn": "nqn.2014-08.org.nvmexpress:uuid:node1"}, 201, "OK"},
		{"delete in use", "DELETE", vol + "?force=false", nil, 409, "is in use"},
		{"delete in use, no force", "DELETE", vol, nil, 409, "is in use"},
		{"delete bad force", "DELETE", vol + "?force=yes", nil, 400, "force must be true or false"},
		{"unexpose", "DELETE", vol + "/unexpose", nil, 200, "OK"},
		{"delete forced", "DELETE", vol + "?force=true", nil, 200, "OK"},
		{"delete again", "DELETE", vol + "?force=true", nil, 404, "not found"},
		{"get deleted", "GET", vol, nil, 404, "not found"},
		{"unexpose deleted", "DELETE", vol + "/unexpose", nil, 404, "not found"},
	})
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	wwnRE  = regexp.MustCompile(`^naa\.6[0-9a-f]{31}$`)
	snRE   = regexp.MustCompile(`^[0-9A-Z]{20}$`)
)

// TestVolumeShape: a volume's fields have the contract's formats, a get
// wraps it in {"volume": ...}, nsids are allocated from 1 and reused, and
// the data file has the volume's size.
func TestVolumeShape(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/shared", nil).must(t, 201)
	var vols []volume
	for _, n := range []string{"a", "b", "c"} {
		var v volume
		c.call("POST", pathD+"/volumes", volBody(n, 300, "shared")).must(t, 201).decode(t, &v)
		vols = append(vols, v)
	}
	v := vols[0]
	if !uuidRE.MatchString(v.UUID) || !wwnRE.MatchString(v.WWN) || !snRE.MatchString(v.SN) {
		t.Errorf("uuid %q wwn %q sn %q", v.UUID, v.WWN, v.SN)
	}
	if v.Name != "a" || v.BlockSize != 4096 || v.NBlocks != 300 || v.Subsystem != "shared" || v.NSID != 1 || v.Xattrs["pvc"] != "a" {
		t.Errorf("volume %+v", v)
	}
	if vols[1].NSID != 2 || vols[2].NSID != 3 || vols[1].VolumeID != v.VolumeID+1 || vols[1].UUID == v.UUID {
		t.Errorf("second/third volume %+v %+v", vols[1], vols[2])
	}
	var got struct{ Volume volume }
	c.call("GET", pathD+"/volumes/a", nil).must(t, 200).decode(t, &got)
	if got.Volume.UUID != v.UUID || got.Volume.NSID != 1 {
		t.Errorf("GET: %+v", got.Volume)
	}
	fi, err := os.Stat(s.DataPath(v.UUID))
	if err != nil || fi.Size() != 300*4096 {
		t.Fatalf("data file: %v %v", fi, err)
	}
	c.call("DELETE", pathD+"/volumes/b", nil).must(t, 200)
	var d volume
	c.call("POST", pathD+"/volumes", volBody("d", 8, "shared")).must(t, 201).decode(t, &d)
	if d.NSID != 2 {
		t.Errorf("a freed nsid is reused first: got %d", d.NSID)
	}
	if _, err := os.Stat(s.DataPath(vols[1].UUID)); !os.IsNotExist(err) {
		t.Errorf("data file of a deleted volume: %v", err)
	}
	c.call("PUT", pathD+"/volumes/a/resize", map[string]any{"nblocks": 1000}).must(t, 200).decode(t, &v)
	if fi, err := os.Stat(s.DataPath(v.UUID)); err != nil || fi.Size() != 1000*4096 || v.NBlocks != 1000 {
		t.Errorf("after resize: %+v %v %v", v, fi, err)
	}
	var d512 volume
	c.call("POST", pathD+"/volumes", map[string]any{"volumeName": "e", "nblocks": 3, "block_size": 512, "nvmfTarget": "shared"}).must(t, 201).decode(t, &d512)
	if fi, err := os.Stat(s.DataPath(d512.UUID)); err != nil || fi.Size() != 1536 || d512.Xattrs == nil {
		t.Errorf("512-byte blocks: %+v %v %v", d512, fi, err)
	}
}

// TestVolumePaging: lists are sorted by name; `from` starts after a name
// and `limit` bounds the page.
func TestVolumePaging(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/ss", nil).must(t, 201)
	for _, n := range []string{"e", "b", "d", "a", "c"} {
		c.call("POST", pathD+"/volumes", volBody(n, 1, "ss")).must(t, 201)
	}
	cases := []struct {
		name        string
		limit, from string
		want        string
		status      int
	}{
		{"all", "", "", "a,b,c,d,e", 200},
		{"limit 0 is all", "0", "", "a,b,c,d,e", 200},
		{"first page", "2", "", "a,b", 200},
		{"second page", "2", "b", "c,d", 200},
		{"last page", "2", "d", "e", 200},
		{"after the end", "2", "e", "", 200},
		{"from a name that is not there", "", "bb", "c,d,e", 200},
		{"limit above the count", "10", "", "a,b,c,d,e", 200},
		{"bad limit", "x", "", "", 400},
		{"negative limit", "-1", "", "", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.limit != "" {
				h = append(h, "limit", tc.limit)
			}
			if tc.from != "" {
				h = append(h, "from", tc.from)
			}
			a := c.call("GET", pathD+"/volumes", nil, h...).must(t, tc.status)
			if tc.status != 200 {
				return
			}
			var vols []volume
			a.decode(t, &vols)
			var names []string
			for _, v := range vols {
				names = append(names, v.Name)
			}
			if got := strings.Join(names, ","); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
