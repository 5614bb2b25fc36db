package infinia

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestTargetCalls: every change of a subsystem reaches the Target as the
// complete snapshot; reads and no-op changes do not; delete is Remove.
func TestTargetCalls(t *testing.T) {
	rec := &recordingTarget{}
	s := startServer(t, func(o *Options) { o.Target = rec })
	c := loggedIn(t, s)
	const nqn = "nqn.2023-03.com.ddn:red:clu1:red:red:pvc-t"
	ss := pathP + "/subsystems/pvc-t"
	vol := pathD + "/volumes/pvc-t"
	expose := func(i int) map[string]any {
		return map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": i}}
	}
	var uuid string
	dev := func() string { return filepath.Join(s.opts.StateDir, "volumes", uuid+".img") }
	steps := []struct {
		name         string
		method, path string
		body         any
		want         func() *Subsystem // nil: no Apply
		removed      []string
	}{
		{"create subsystem", "POST", ss, map[string]any{"port": 4420}, func() *Subsystem { return &Subsystem{NQN: nqn} }, nil},
		{"create volume", "POST", pathD + "/volumes", volBody("pvc-t", 8, "pvc-t"), func() *Subsystem {
			return &Subsystem{NQN: nqn, Namespaces: []Namespace{{NSID: 1, UUID: uuid, DevicePath: dev()}}}
		}, nil},
		{"expose 2", "PUT", vol + "/expose", expose(2), func() *Subsystem {
			return &Subsystem{NQN: nqn, Namespaces: []Namespace{{NSID: 1, UUID: uuid, DevicePath: dev()}},
				Listeners: []Listener{{Addr: "127.0.0.2", Port: 4420}}}
		}, nil},
		{"expose 2 again", "PUT", vol + "/expose", expose(2), nil, nil},
		{"get", "GET", ss, nil, nil, nil},
		{"add host", "POST", ss + "/hosts", map[string]any{"host_nqn": hostA}, func() *Subsystem {
			return &Subsystem{NQN: nqn, Hosts: []string{hostA}, Namespaces: []Namespace{{NSID: 1, UUID: uuid, DevicePath: dev()}},
				Listeners: []Listener{{Addr: "127.0.0.2", Port: 4420}}}
		}, nil},
		{"resize", "PUT", vol + "/resize", map[string]any{"nblocks": 16}, func() *Subsystem {
			return &Subsystem{NQN: nqn, Hosts: []string{hostA}, Namespaces: []Namespace{{NSID: 1, UUID: uuid, DevicePath: dev()}},
				Listeners: []Listener{{Addr: "127.0.0.2", Port: 4420}}}
		}, nil},
		{"remove host", "DELETE", ss + "/hosts/" + hostA, nil, func() *Subsystem {
			return &Subsystem{NQN: nqn, Namespaces: []Namespace{{NSID: 1, UUID: uuid, DevicePath: dev()}},
				Listeners: []Listener{{Addr: "127.0.0.2", Port: 4420}}}
		}, nil},
		{"unexpose", "DELETE", vol + "/unexpose", nil, func() *Subsystem {
			return &Subsystem{NQN: nqn, Namespaces: []Namespace{{NSID: 1, UUID: uuid, DevicePath: dev()}}}
		}, nil},
		{"delete volume", "DELETE", vol, nil, func() *Subsystem { return &Subsystem{NQN: nqn} }, nil},
		{"delete subsystem", "DELETE", ss, nil, nil, []string{nqn}},
	}
	for _, st := range steps {
		a := c.call(st.method, st.path, st.body)
		if a.Status >= 300 {
			t.Fatalf("%s: %d %s", st.name, a.Status, a.Title)
		}
		if st.name == "create volume" {
			var v volume
			a.decode(t, &v)
			uuid = v.UUID
		}
		applied, removed := rec.take()
		var want []Subsystem
		if st.want != nil {
			want = []Subsystem{*st.want()}
		}
		if !reflect.DeepEqual(applied, want) || !reflect.DeepEqual(removed, st.removed) {
			t.Errorf("%s: applied %+v removed %v\nwant applied %+v removed %v", st.name, applied, removed, want, st.removed)
		}
	}
}

// TestTargetFailureRollsBack: a failing Target makes the call 500 and
// leaves the tree and the data files as they were.
func TestTargetFailureRollsBack(t *testing.T) {
	rec := &recordingTarget{}
	s := startServer(t, func(o *Options) { o.Target = rec })
	c := loggedIn(t, s)
	c.mkVolume("v", 8)
	c.call("PUT", pathD+"/volumes/v/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}).must(t, 200)
	var before subsystemJSON
	c.call("GET", pathP+"/subsystems/v", nil).must(t, 200).decode(t, &before)
	var vol struct{ Volume volume }
	c.call("GET", pathD+"/volumes/v", nil).must(t, 200).decode(t, &vol)
	rec.take()
	rec.setFail(true)
	cases := []struct {
		name         string
		method, path string
		body         any
	}{
		{"create subsystem", "POST", pathP + "/subsystems/w", nil},
		{"create volume", "POST", pathD + "/volumes", volBody("w", 8, "v")},
		{"add host", "POST", pathP + "/subsystems/v/hosts", map[string]any{"host_nqn": hostA}},
		{"expose", "PUT", pathD + "/volumes/v/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 3}}},
		{"unexpose", "DELETE", pathD + "/volumes/v/unexpose", nil},
		{"resize", "PUT", pathD + "/volumes/v/resize", map[string]any{"nblocks": 64}},
		{"delete volume", "DELETE", pathD + "/volumes/v", nil},
		{"delete subsystem", "DELETE", pathP + "/subsystems/v?force=true", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := c.call(tc.method, tc.path, tc.body).must(t, 500)
			if want := "target: subsystem nqn.2023-03.com.ddn:red:clu1:red:red:"; len(a.Title) < len(want) || a.Title[:len(want)] != want {
				t.Errorf("title %q", a.Title)
			}
			var after subsystemJSON
			c.call("GET", pathP+"/subsystems/v", nil).must(t, 200).decode(t, &after)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("subsystem changed:\n%+v\n%+v", before, after)
			}
			var v struct{ Volume volume }
			c.call("GET", pathD+"/volumes/v", nil).must(t, 200).decode(t, &v)
			if !reflect.DeepEqual(v, vol) {
				t.Errorf("volume changed: %+v", v.Volume)
			}
			if fi, err := os.Stat(s.DataPath(vol.Volume.UUID)); err != nil || fi.Size() != 8*4096 {
				t.Errorf("data file: %v %v", fi, err)
			}
			c.call("GET", pathP+"/subsystems/w", nil).must(t, 404)
			c.call("GET", pathD+"/volumes/w", nil).must(t, 404)
			entries, _ := os.ReadDir(filepath.Join(s.opts.StateDir, "volumes"))
			if len(entries) != 1 {
				t.Errorf("data files: %v", entries)
			}
			// The failed call, then a best-effort revert of the Target.
			applied, removed := rec.take()
			if len(applied)+len(removed) != 2 {
				t.Fatalf("target calls: applied %+v removed %v", applied, removed)
			}
			if tc.name == "create subsystem" {
				if len(removed) != 1 || removed[0] != applied[0].NQN {
					t.Errorf("a failed creation is reverted with Remove: %v", removed)
				}
				return
			}
			if last := applied[len(applied)-1]; last.NQN != before.NQN || len(last.Listeners) != 1 || len(last.Namespaces) != 1 || len(last.Hosts) != 0 {
				t.Errorf("revert applied %+v", last)
			}
		})
	}
	rec.setFail(false)
	c.call("DELETE", pathD+"/volumes/v", nil).must(t, 200)
}
