package storage

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// versions are the releases the simulator serves.
var versions = []string{"24.10", "25.04", "25.10", "26.04"}

type env struct {
	t *testing.T
	r *middleware.Registry
	m *zfsmodel.Model
	v middleware.Version

	mu       sync.Mutex
	deleted  []string  // datasets the delete hook saw
	progress []float64 // job progress reported
}

// newEnv registers the storage services of version on a fresh model with
// one 10 GiB pool "tank".
func newEnv(t *testing.T, version string) *env {
	t.Helper()
	m, err := zfsmodel.Open(zfsmodel.Options{
		StateDir:       t.TempDir(),
		Pools:          []zfsmodel.PoolSpec{{Name: "tank", Size: 10 << 30}},
		RescanInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	v, err := middleware.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, r: middleware.NewRegistry(), m: m, v: v}
	if err := Register(e.r, m, v, Options{}); err != nil {
		t.Fatal(err)
	}
	e.r.OnDatasetDelete(func(_ *middleware.Call, ds string) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.deleted = append(e.deleted, ds)
		return nil
	})
	return e
}

// call runs a method through the registry, as a transport would, and
// returns its result after a JSON round trip (what a client decodes).
func (e *env) call(method string, params ...any) (any, error) {
	e.t.Helper()
	m, ok := e.r.Lookup(method)
	if !ok {
		e.t.Fatalf("%s: method not registered for %s", method, e.v)
	}
	raw := make([]json.RawMessage, len(params))
	for i, p := range params {
		b, err := json.Marshal(p)
		if err != nil {
			e.t.Fatal(err)
		}
		raw[i] = b
	}
	c := &middleware.Call{Ctx: context.Background(), Version: e.v, User: "root",
		Progress: func(p float64, _ string) {
			e.mu.Lock()
			e.progress = append(e.progress, p)
			e.mu.Unlock()
		}}
	res, err := m.Handler(c, raw)
	if err != nil {
		return nil, err
	}
	b, jerr := json.Marshal(res)
	if jerr != nil {
		e.t.Fatalf("%s: result does not marshal: %v", method, jerr)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatal(err)
	}
	return out, nil
}

// must is call that fails the test on an error.
func (e *env) must(method string, params ...any) any {
	e.t.Helper()
	res, err := e.call(method, params...)
	if err != nil {
		e.t.Fatalf("%s %v: %v", method, params, err)
	}
	return res
}

// obj asserts v is a JSON object.
func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("got %T (%v), want an object", v, v)
	}
	return m
}

// at walks a dotted path through decoded JSON ("volsize.rawvalue").
func at(t *testing.T, v any, path string) any {
	t.Helper()
	cur := v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not an object in %v", path, k, v)
		}
		if cur, ok = m[k]; !ok {
			t.Fatalf("%s: no %q", path, k)
		}
	}
	return cur
}

// wantValidation asserts err is ValidationErrors with attr and a message
// containing text.
func wantValidation(t *testing.T, err error, attr, text string) {
	t.Helper()
	var ve middleware.ValidationErrors
	if !errors.As(err, &ve) {
		t.Fatalf("got %T %v, want ValidationErrors %s: %s", err, err, attr, text)
	}
	for _, v := range ve {
		if v.Attribute == attr && strings.Contains(v.Message, text) {
			return
		}
	}
	t.Fatalf("ValidationErrors %v: no %s: %q", ve, attr, text)
}

// wantCallError asserts err is a CallError with errno and text.
func wantCallError(t *testing.T, err error, errno int, text string) {
	t.Helper()
	var ce *middleware.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want CallError %d %q", err, err, errno, text)
	}
	if ce.Errno != errno || !strings.Contains(ce.Message, text) {
		t.Fatalf("CallError [%d] %q, want [%d] containing %q", ce.Errno, ce.Message, errno, text)
	}
}

// wantNotFound asserts err is InstanceNotFound with text.
func wantNotFound(t *testing.T, err error, text string) {
	t.Helper()
	var nf *middleware.InstanceNotFound
	if !errors.As(err, &nf) || !strings.Contains(nf.Message, text) {
		t.Fatalf("got %T %v, want InstanceNotFound %q", err, err, text)
	}
}

// snapNS is the snapshot namespace of the env's version.
func (e *env) snapNS() string {
	if e.v.AtLeast(25, 10, 0) {
		return "pool.snapshot"
	}
	return "zfs.snapshot"
}

func (e *env) mkfs(name string, extra map[string]any) map[string]any {
	e.t.Helper()
	body := map[string]any{"name": name}
	for k, v := range extra {
		body[k] = v
	}
	return obj(e.t, e.must("pool.dataset.create", body))
}
