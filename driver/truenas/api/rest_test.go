package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestRESTWire checks what reaches the server for typical backend calls
// and how its answers come back.
func TestRESTWire(t *testing.T) {
	f := newFakeNAS(t, "24.10")
	datasets := map[string]map[string]any{}
	f.handle("pool.dataset.create", func(_ context.Context, p []json.RawMessage) (any, error) {
		var d map[string]any
		_ = json.Unmarshal(p[0], &d)
		name, _ := d["name"].(string)
		if _, ok := datasets[name]; ok {
			return nil, fakeCallError{errno: 17, msg: "Dataset " + name + " already exists"}
		}
		if v, ok := d["volsize"].(float64); ok && int64(v)%16384 != 0 {
			return nil, fakeValidation{{"pool_dataset_create.volsize", "Volume size should be a multiple of volume block size", 22}}
		}
		d["id"] = name
		datasets[name] = d
		return d, nil
	})
	f.handle("pool.dataset.get_instance", func(_ context.Context, p []json.RawMessage) (any, error) {
		var id string
		_ = json.Unmarshal(p[0], &id)
		if d, ok := datasets[id]; ok {
			return d, nil
		}
		return nil, fakeInstanceNotFound("Pool dataset " + id + " does not exist")
	})
	f.handle("pool.dataset.query", func(_ context.Context, p []json.RawMessage) (any, error) { return []any{}, nil })
	f.handle("pool.dataset.delete", func(_ context.Context, p []json.RawMessage) (any, error) { return true, nil })
	f.start()
	c := newClient(t, f.config())
	ctx := ctxT(t)

	if _, err := c.Call(ctx, "pool.dataset.create", map[string]any{"name": "tank/k8s/v1", "type": "VOLUME", "volsize": 1 << 20}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "pool.dataset.get_instance", "tank/k8s/v1")
	if err != nil || !strings.Contains(string(res), `"id":"tank/k8s/v1"`) {
		t.Fatalf("get_instance: %s, %v", res, err)
	}
	_, err = c.Call(ctx, "pool.dataset.get_instance", "tank/k8s/none")
	if !IsNotFound(err) || !strings.Contains(err.Error(), "pool.dataset.get_instance") {
		t.Fatalf("missing get_instance: %v", err)
	}
	_, err = c.Call(ctx, "pool.dataset.create", map[string]any{"name": "tank/k8s/v1", "type": "VOLUME", "volsize": 1 << 20})
	if !IsExists(err) {
		t.Fatalf("duplicate create: %v", err)
	}
	_, err = c.Call(ctx, "pool.dataset.create", map[string]any{"name": "tank/k8s/v2", "type": "VOLUME", "volsize": 1000})
	want := "pool.dataset.create: pool_dataset_create.volsize: Volume size should be a multiple of volume block size"
	if !IsValidation(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("validation: %v", err)
	}
	if _, err := c.Call(ctx, "pool.dataset.query", [][]any{{"id", "=", "tank/k8s/v1"}}, map[string]any{"limit": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "pool.dataset.delete", "tank/k8s/v1", map[string]any{"recursive": true}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(ctx, "pool.dataset.promote", "tank/k8s/v1")
	if !isMethodNotFound(err) || IsNotFound(err) || !strings.Contains(err.Error(), "no such REST endpoint POST /api/v2.0/pool/dataset/promote") {
		t.Fatalf("missing route: %v", err)
	}

	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(f.user+":"+f.pass))
	wantReqs := []restRecord{
		{Verb: "GET", Path: "/api/v2.0/system/version"},
		{Verb: "POST", Path: "/api/v2.0/pool/dataset", Body: `{"name":"tank/k8s/v1","type":"VOLUME","volsize":1048576}`},
		{Verb: "GET", Path: "/api/v2.0/pool/dataset/id/tank%2Fk8s%2Fv1"},
		{Verb: "GET", Path: "/api/v2.0/pool/dataset/id/tank%2Fk8s%2Fnone"},
		{Verb: "POST", Path: "/api/v2.0/pool/dataset", Body: `{"name":"tank/k8s/v1","type":"VOLUME","volsize":1048576}`},
		{Verb: "POST", Path: "/api/v2.0/pool/dataset", Body: `{"name":"tank/k8s/v2","type":"VOLUME","volsize":1000}`},
		{Verb: "GET", Path: "/api/v2.0/pool/dataset", Query: "id=tank%2Fk8s%2Fv1&limit=1"},
		{Verb: "DELETE", Path: "/api/v2.0/pool/dataset/id/tank%2Fk8s%2Fv1", Body: `{"recursive":true}`},
		{Verb: "POST", Path: "/api/v2.0/pool/dataset/promote", Body: `"tank/k8s/v1"`},
	}
	got := f.restRequests()
	if len(got) != len(wantReqs) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(wantReqs), got)
	}
	for i, w := range wantReqs {
		g := got[i]
		if g.Auth != basic {
			t.Errorf("request %d: Authorization %q", i, g.Auth)
		}
		g.Auth = ""
		if g != w {
			t.Errorf("request %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestRESTBearer(t *testing.T) {
	f := newFakeNAS(t, "24.10").start()
	c := newClient(t, f.keyConfig())
	if _, err := c.Call(ctxT(t), "test.echo", "x"); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.restRequests() {
		if r.Auth != "Bearer "+f.apiKey {
			t.Fatalf("Authorization %q", r.Auth)
		}
	}
	if c.Stats().HTTPRequests != len(f.restRequests()) {
		t.Fatalf("stats %+v, server saw %d", c.Stats(), len(f.restRequests()))
	}
}

func TestRESTWrongKey(t *testing.T) {
	f := newFakeNAS(t, "24.10").start()
	cfg := f.keyConfig()
	cfg.APIKey = "1-" + strings.Repeat("x", 64)
	c := newClient(t, cfg)
	_, err := c.Call(ctxT(t), "test.echo", "x")
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "the API key was refused (Invalid API key)") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), strings.Repeat("x", 64)) {
		t.Fatalf("error leaks the key: %v", err)
	}
}
