package truenas

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestServicesWired: the storage and sharing services answer through the
// transports, per release (smoke test of the wiring; their behaviour is
// tested in their packages).
func TestServicesWired(t *testing.T) {
	t.Run("24.10 REST", func(t *testing.T) {
		s := startServer(t, "24.10")
		if s.Sharing() == nil {
			t.Fatal("Sharing() is nil")
		}
		status, body := rest(t, nil, s.URL(), "POST", "/pool/dataset", `{"name":"tank/vol1","type":"VOLUME","volsize":1073741824,"volblocksize":"16K"}`, rootAuth)
		if status != http.StatusOK {
			t.Fatalf("create zvol: %d %s", status, body)
		}
		status, body = rest(t, nil, s.URL(), "GET", "/pool/dataset/id/tank%2Fvol1", "", rootAuth)
		var ds map[string]any
		json.Unmarshal(body, &ds)
		if status != http.StatusOK || ds["id"] != "tank/vol1" || ds["type"] != "VOLUME" {
			t.Fatalf("get by id: %d %s", status, body)
		}
		if status, body := rest(t, nil, s.URL(), "GET", "/pool/dataset/id/tank%2Fnope", "", rootAuth); status != http.StatusNotFound {
			t.Errorf("get of a missing dataset: %d %s", status, body)
		}
		status, body = rest(t, nil, s.URL(), "POST", "/sharing/nfs", `{"path":"/mnt/tank","comment":"x"}`, rootAuth)
		if status != http.StatusOK {
			t.Errorf("NFS share: %d %s", status, body)
		}
		if status, body := rest(t, nil, s.URL(), "DELETE", "/pool/dataset/id/tank%2Fvol1", "", rootAuth); status != http.StatusOK {
			t.Errorf("delete: %d %s", status, body)
		}
		if _, err := s.Model().Get("tank/vol1"); err == nil {
			t.Error("the zvol is still in the model after DELETE")
		}
		if status, _ := rest(t, nil, s.URL(), "GET", "/zfs/snapshot", "", rootAuth); status != http.StatusOK {
			t.Errorf("GET /zfs/snapshot on 24.10: %d", status)
		}
	})
	t.Run("25.10 JSON-RPC", func(t *testing.T) {
		s := startServer(t, "25.10")
		c := dialRPC(t, s)
		c.login()
		var ds map[string]any
		c.result("pool.dataset.create", &ds, map[string]any{"name": "tank/fs1"})
		if ds["id"] != "tank/fs1" || ds["mountpoint"] != "/mnt/tank/fs1" {
			t.Fatalf("create: %v", ds)
		}
		var snap map[string]any
		c.result("pool.snapshot.create", &snap, map[string]any{"dataset": "tank/fs1", "name": "s1"})
		if a := c.call("zfs.snapshot.create", map[string]any{"dataset": "tank/fs1", "name": "s2"}); a.Error == nil || a.Error.Code != rpcMethodNotFound {
			t.Errorf("zfs.snapshot.create on 25.10: %+v", a.Error)
		}
		var ports []map[string]any
		c.result("nvmet.port.query", &ports)
		var pools []map[string]any
		c.result("pool.query", &pools, [][]any{{"name", "=", "tank"}})
		if len(pools) != 1 {
			t.Errorf("pool.query: %v", pools)
		}
	})
}
