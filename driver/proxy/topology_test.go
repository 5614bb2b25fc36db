package proxy

import (
	"maps"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

func term(kv ...string) *csipb.Topology {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &csipb.Topology{Segments: m}
}

func TestCheckTopology(t *testing.T) {
	p := DefaultTopologyPrefix
	entries := []TopologyEntry{
		{Requirements: map[string]string{"zone": "z1", "region": "r1"}, Extra: map[string]string{"custom.io/rack": "1"}},
		{Requirements: map[string]string{"zone": "z2", "region": "r1"}},
	}
	tests := []struct {
		name      string
		req       *csipb.TopologyRequirement
		firstZone string // zone of the first returned segment
		err       string
	}{
		{"no requirements (mode 1)", nil, "z1", ""},
		{"allowed topologies, one served (mode 2)", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{term(p+"/zone", "z9"), term(p+"/zone", "z2")}}, "z1", ""},
		{"strict node topology (mode 3)", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{term(p+"/zone", "z2", p+"/region", "r1")}, Preferred: []*csipb.Topology{term(p+"/zone", "z2", p+"/region", "r1")}}, "z2", ""},
		{"keys the entry lacks are ignored", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{term(p+"/zone", "z1", p+"/node", "n1")}}, "z1", ""},
		{"none served", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{term(p+"/zone", "z9")}}, "", "serves none of the requested topologies"},
		{"unprefixed key", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{term("zone", "z1")}}, "", "does not carry the prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkTopology("c1", p, entries, tt.req)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "c1") {
					t.Fatalf("err = %v; want %q naming the connection", err, tt.err)
				}
				return
			}
			if err != nil || len(got) != 2 {
				t.Fatalf("got %v, %v", got, err)
			}
			if z := got[0].GetSegments()[p+"/zone"]; z != tt.firstZone {
				t.Fatalf("first segment zone %q; want %q", z, tt.firstZone)
			}
		})
	}
	got, _ := checkTopology("c1", p, entries, nil)
	want := map[string]string{p + "/zone": "z1", p + "/region": "r1", "custom.io/rack": "1"}
	if !maps.Equal(got[0].GetSegments(), want) {
		t.Fatalf("segments %v; want %v (prefixed requirements plus extra)", got[0].GetSegments(), want)
	}
}
