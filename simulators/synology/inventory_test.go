package synology

import (
	"strconv"
	"testing"
	"time"
)

// TestInventory: a mapped LUN shows its target, a deleted one is listed as
// deleting until DSM's background deletion ends, then the NAS is empty.
func TestInventory(t *testing.T) {
	e := start(t, Options{Volumes: []Volume{{Path: "/volume1", Size: 10 << 30}}, DeleteDelay: 50 * time.Millisecond})
	if !e.srv.Inventory().Empty() {
		t.Fatalf("fresh NAS: %+v", e.srv.Inventory())
	}
	e.login()
	var lun struct{ UUID string }
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "create", "name": "pvc-1",
		"location": "/volume1", "size": strconv.Itoa(1 << 30), "type": "BLUN"}, &lun)
	var tgt struct {
		TargetID int `json:"target_id"`
	}
	const iqn = "iqn.2000-01.com.synology:csi.pvc-1"
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "create", "name": "pvc-1", "iqn": iqn}, &tgt)
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "map_target", "uuid": lun.UUID,
		"target_ids": `[` + strconv.Itoa(tgt.TargetID) + `]`}, nil)
	inv := e.srv.Inventory()
	if len(inv.LUNs) != 1 || inv.LUNs[0].Name != "pvc-1" || inv.LUNs[0].Size != 1<<30 || inv.LUNs[0].Deleting ||
		len(inv.LUNs[0].Targets) != 1 || inv.LUNs[0].Targets[0] != iqn || len(inv.Targets) != 1 {
		t.Fatalf("after create and map: %+v", inv)
	}
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "delete", "target_id": strconv.Itoa(tgt.TargetID)}, nil)
	e.ok("entry.cgi", map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "delete", "uuid": lun.UUID}, nil)
	if inv := e.srv.Inventory(); len(inv.LUNs) != 1 || !inv.LUNs[0].Deleting || inv.Empty() {
		t.Fatalf("just deleted: %+v", inv)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !e.srv.Inventory().Empty() {
		if time.Now().After(deadline) {
			t.Fatalf("still held 5s after the delete: %+v", e.srv.Inventory())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
