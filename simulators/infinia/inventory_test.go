package infinia

import (
	"reflect"
	"testing"
)

// TestInventory: the in-process inventory lists what the REST calls made,
// with host grants and namespaces, and follows their removal.
func TestInventory(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	if inv := s.Inventory(); len(inv.Volumes) != 0 || len(inv.Subsystems) != 0 {
		t.Fatalf("a new simulator holds %+v", inv)
	}
	c.mkVolume("pvc-1", 16)
	c.call("POST", pathP+"/subsystems/pvc-1/hosts", map[string]any{"host_nqn": hostA}).must(t, 201)
	inv := s.Inventory()
	if len(inv.Volumes) != 1 || inv.Volumes[0].Name != "pvc-1" || inv.Volumes[0].Subsystem != "pvc-1" || inv.Volumes[0].Size != 16*4096 {
		t.Errorf("volumes: %+v", inv.Volumes)
	}
	if len(inv.Subsystems) != 1 || inv.Subsystems[0].Name != "pvc-1" || !reflect.DeepEqual(inv.Subsystems[0].Hosts, []string{hostA}) ||
		len(inv.Subsystems[0].Volumes) != 1 {
		t.Errorf("subsystems: %+v", inv.Subsystems)
	}
	c.call("DELETE", pathP+"/subsystems/pvc-1/hosts/"+hostA, nil).must(t, 200)
	c.call("DELETE", pathP+"/subsystems/pvc-1?force=true", nil).must(t, 200)
	if inv := s.Inventory(); len(inv.Subsystems) != 0 || len(inv.Volumes) != 1 || inv.Volumes[0].Subsystem != "" {
		t.Errorf("after the subsystem's removal: %+v", inv)
	}
}
