package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// BenchmarkDatasetPair is the storage side of the driver's NFS create and
// delete (BenchmarkTrueNASCreateDelete without transports and shares):
// pool.dataset.create with user properties, update, the delete's dataset
// and snapshot queries, delete, each answer encoded as a transport does.
// Its allocations per pair are exact where the CPU figures of the shared
// machine are not.
func BenchmarkDatasetPair(b *testing.B) {
	m, err := zfsmodel.Open(zfsmodel.Options{StateDir: b.TempDir(),
		Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 100 << 30}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	v, _ := middleware.ParseVersion("25.10")
	r := middleware.NewRegistry()
	if err := Register(r, m, v, Options{}); err != nil {
		b.Fatal(err)
	}
	r.OnDatasetDelete(func(*middleware.Call, string) error { return nil })
	call := func(method string, params ...any) {
		meth, ok := r.Lookup(method)
		if !ok {
			b.Fatalf("no %s", method)
		}
		raw := make([]json.RawMessage, len(params))
		for i, p := range params {
			raw[i], _ = json.Marshal(p)
		}
		res, err := meth.Handler(&middleware.Call{Ctx: context.Background(), Version: v, User: "root"}, raw)
		if err != nil {
			b.Fatalf("%s: %v", method, err)
		}
		if _, err := middleware.Encode(res); err != nil {
			b.Fatal(err)
		}
	}
	call("pool.dataset.create", map[string]any{"name": "tank/k8s"})
	for i := 0; i < 100; i++ {
		call("pool.dataset.create", map[string]any{"name": fmt.Sprintf("tank/k8s/other-%d", i)})
	}
	user := []any{}
	for _, k := range []string{"democratic-csi:csi_share_volume_context", "democratic-csi:managed_resource", "democratic-csi:volume_context_provisioner_driver", "democratic-csi:csi_volume_name"} {
		user = append(user, map[string]any{"key": k, "value": "some value of " + k})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("tank/k8s/pvc-%d", i)
		call("pool.dataset.create", map[string]any{"name": name, "type": "FILESYSTEM", "refquota": 1 << 30,
			"refreservation": 0, "user_properties": user})
		call("pool.dataset.update", name, map[string]any{"user_properties_update": []any{
			map[string]any{"key": "democratic-csi:provision_success", "value": "true"}}})
		call("pool.dataset.query", []any{[]any{"OR", []any{[]any{"id", "=", name}, []any{"id", "^", name + "/"}}}},
			map[string]any{"extra": map[string]any{"flat": true, "retrieve_children": false,
				"properties": []any{"origin", "clones", "mountpoint"}, "user_properties": true}})
		call("pool.snapshot.query", []any{[]any{"dataset", "=", name}},
			map[string]any{"extra": map[string]any{"properties": []any{"origin", "clones", "democratic-csi:managed_resource"}}})
		call("pool.dataset.delete", name, map[string]any{"recursive": false, "force": false})
	}
}
