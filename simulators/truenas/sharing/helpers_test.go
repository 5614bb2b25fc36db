package sharing

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// env is one simulated system: a ZFS model with pool tank mounted at
// /mnt/tank (as TrueNAS mounts pools), filesystems tank/a and tank/b, a
// zvol tank/vol and the sharing service registered for a version.
type env struct {
	t     *testing.T
	v     middleware.Version
	m     *zfsmodel.Model
	r     *middleware.Registry
	s     *Service
	state string
	// parallel: calls run concurrently, so a call may return while
	// another's change is still being written (call skips its check).
	parallel bool
}

func newEnv(t *testing.T, version string) *env {
	t.Helper()
	v, err := middleware.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m, err := zfsmodel.Open(zfsmodel.Options{StateDir: filepath.Join(dir, "zfs"), Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 10 << 30}}, RescanInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.SetProperty("tank", "mountpoint", "/mnt/tank"); err != nil {
		t.Fatal(err)
	}
	for _, fs := range []string{"tank/a", "tank/b", "tank/a/child"} {
		if err := m.Create(fs, zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, vol := range []string{"tank/vol", "tank/vol2"} {
		if err := m.Create(vol, zfsmodel.Volume, nil, zfsmodel.CreateOptions{Volsize: 1 << 20, Sparse: true}); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{t: t, v: v, m: m, state: filepath.Join(dir, "sharing")}
	e.register()
	return e
}

// register (re)starts the service on the same state, as a restarted
// simulator does.
func (e *env) register() {
	e.t.Helper()
	e.r = middleware.NewRegistry()
	s, err := Register(e.r, e.m, e.v, Options{StateDir: e.state, Hostname: "truenas"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.s = s
}

// call runs a method as the transports do and returns its result as
// decoded JSON (what a client sees).
func (e *env) call(method string, params ...any) (any, error) {
	e.t.Helper()
	m, ok := e.r.Lookup(method)
	if !ok {
		e.t.Fatalf("%s is not registered in %s", method, e.v)
	}
	raw := make([]json.RawMessage, len(params))
	for i, p := range params {
		if s, ok := p.(string); ok && json.Valid([]byte(s)) && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) {
			raw[i] = json.RawMessage(s)
			continue
		}
		b, err := json.Marshal(p)
		if err != nil {
			e.t.Fatal(err)
		}
		raw[i] = b
	}
	res, err := m.Handler(&middleware.Call{Ctx: context.Background(), Version: e.v, User: "root"}, raw)
	if !e.parallel {
		e.requireWritten(method)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		e.t.Fatalf("%s: result does not marshal: %v", method, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatal(err)
	}
	return out, nil
}

// requireWritten fails the test when a table has a change that is not in
// its file: every method that changes a table must answer only once the
// change is written (persist.go), whichever path it took.
func (e *env) requireWritten(method string) {
	e.t.Helper()
	for ns, t := range e.s.t {
		if sn := t.p.latest.Load(); sn != nil && sn.ver > t.p.saved.Load() {
			e.t.Fatalf("%s answered with %s version %d not written (file has %d)", method, ns, sn.ver, t.p.saved.Load())
		}
	}
}

// must runs a call that has to succeed and returns its object result.
func (e *env) must(method string, params ...any) map[string]any {
	e.t.Helper()
	res, err := e.call(method, params...)
	if err != nil {
		e.t.Fatalf("%s %v: %v", method, params, err)
	}
	obj, _ := res.(map[string]any)
	return obj
}

// list runs a query and returns its rows.
func (e *env) list(method string, params ...any) []map[string]any {
	e.t.Helper()
	res, err := e.call(method, params...)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	var out []map[string]any
	for _, x := range res.([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// configureISCSI does what an admin does on a fresh TrueNAS before an
// iSCSI client can make targets (a fresh system has neither): portal 1 on
// every address and initiator group 1 admitting every initiator.
func (e *env) configureISCSI() {
	e.t.Helper()
	if p := e.must("iscsi.portal.create", map[string]any{"listen": []any{map[string]any{"ip": "0.0.0.0"}}}); id(p) != 1 {
		e.t.Fatalf("first portal of a fresh system: %v", p)
	}
	if ig := e.must("iscsi.initiator.create", map[string]any{}); id(ig) != 1 {
		e.t.Fatalf("first initiator group of a fresh system: %v", ig)
	}
}

func id(o map[string]any) int { return int(o["id"].(float64)) }

// wantInvalid asserts err is a ValidationErrors with an entry on attr
// whose message contains msg.
func wantInvalid(t *testing.T, err error, attr, msg string) {
	t.Helper()
	var v middleware.ValidationErrors
	if !errors.As(err, &v) {
		t.Fatalf("error %v (%T), want a validation error %s: %s", err, err, attr, msg)
	}
	for _, e := range v {
		if e.Attribute == attr && strings.Contains(e.Message, msg) {
			return
		}
	}
	t.Fatalf("validation errors %q, want %s: %s", v.Error(), attr, msg)
}

// wantCallError asserts err is a CallError with errno whose message contains msg.
func wantCallError(t *testing.T, err error, errno int, msg string) {
	t.Helper()
	var c *middleware.CallError
	if !errors.As(err, &c) || c.Errno != errno || !strings.Contains(c.Message, msg) {
		t.Fatalf("error %v (%T), want CallError errno %d %q", err, err, errno, msg)
	}
}

// allVersions are the releases the simulator can be started as.
var allVersions = []string{"24.10", "25.04", "25.10", "26.04"}
