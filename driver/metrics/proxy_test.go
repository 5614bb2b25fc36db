package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	_ "github.com/switchyard-csi/switchyard/driver/localhostpath" // local-hostpath, a backend that needs no root
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// proxyRig is the real proxy controller over a connections folder, behind
// the metrics interceptor, as cmd/switchyard wires it.
type proxyRig struct {
	t      *testing.T
	dir    string
	folder string
	m      *Metrics
	ctl    *proxy.Controller
	ic     grpc.UnaryServerInterceptor
}

func newProxyRig(t *testing.T) *proxyRig {
	t.Helper()
	dir := t.TempDir()
	folder := filepath.Join(dir, "connections")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	set := &proxy.Settings{ConfigFolder: folder, CacheTimeout: 0,
		Topology: proxy.TopologySettings{Type: proxy.TopologyNode, Prefix: proxy.DefaultTopologyPrefix}, NodeID: nodeid.Settings{NodeName: true}}
	main := config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": folder}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	conns := proxy.NewConnections(set, main, backend.Options{NodeName: "node-1", CSIName: "test.csi", Logger: log})
	t.Cleanup(conns.Close)
	m := New()
	conns.SetObserver(m.ConnectionState())
	return &proxyRig{t: t, dir: dir, folder: folder, m: m, ctl: proxy.NewController(conns, set, nil, log), ic: m.Interceptor(ProxyRouter(conns.DefaultConnection()))}
}

// hostpath writes a working local-hostpath connection.
func (r *proxyRig) hostpath(name string) string {
	base := filepath.Join(r.dir, "data-"+name)
	return r.write(name, fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %s\n  controllerBasePath: %s\n", base, base))
}

func (r *proxyRig) write(name, content string) string {
	r.t.Helper()
	file := filepath.Join(r.folder, name+".yaml")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return file
}

var mountCap = []*csipb.VolumeCapability{{
	AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}}

// create calls CreateVolume through the interceptor.
func (r *proxyRig) create(conn, name string) (*csipb.CreateVolumeResponse, error) {
	req := &csipb.CreateVolumeRequest{Name: name, Parameters: map[string]string{proxy.ConnectionParameter: conn},
		VolumeCapabilities: mountCap, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}}
	resp, err := r.ic(context.Background(), req, info("CreateVolume"), func(ctx context.Context, req any) (any, error) {
		return r.ctl.CreateVolume(ctx, req.(*csipb.CreateVolumeRequest))
	})
	if err != nil {
		return nil, err
	}
	return resp.(*csipb.CreateVolumeResponse), nil
}

// validate calls ValidateVolumeCapabilities through the interceptor.
func (r *proxyRig) validate(handle string) error {
	req := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: handle, VolumeCapabilities: mountCap}
	_, err := r.ic(context.Background(), req, info("ValidateVolumeCapabilities"), func(ctx context.Context, req any) (any, error) {
		return r.ctl.ValidateVolumeCapabilities(ctx, req.(*csipb.ValidateVolumeCapabilitiesRequest))
	})
	return err
}

// A connection file that breaks shows as connection_config_error with the
// file's name while the other connection keeps serving; fixing the file
// clears the series, and removing it drops the connection's state.
func TestBrokenConnectionFileShowsUntilFixed(t *testing.T) {
	r := newProxyRig(t)
	r.hostpath("good")
	broken := r.write("nas", "driver: [\n")

	if _, err := r.create("nas", "pvc-1"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a broken file: %v, want FAILED_PRECONDITION", err)
	}
	if _, err := r.create("good", "pvc-1"); err != nil {
		t.Fatalf("the good connection stopped serving: %v", err)
	}
	errs := gather(t, r.m.reg, "switchyard_connection_config_error")
	if len(errs) != 1 || errs["connection=nas,file="+broken] != 1 {
		t.Fatalf("config_error series %v, want only nas with file %s", errs, broken)
	}
	loaded := gather(t, r.m.reg, "switchyard_connection_loaded")
	if loaded["connection=nas"] != 0 || loaded["connection=good"] != 1 || len(loaded) != 2 {
		t.Fatalf("loaded %v", loaded)
	}
	// The second call reads no new version: no reload counted.
	if _, err := r.create("nas", "pvc-2"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("still broken: %v", err)
	}
	if got := gather(t, r.m.reg, "switchyard_connection_reloads_total")["connection=nas"]; got != 1 {
		t.Fatalf("reloads of an unchanged file: %v, want 1", got)
	}

	r.hostpath("nas") // fixed
	if _, err := r.create("nas", "pvc-3"); err != nil {
		t.Fatalf("the fixed file: %v", err)
	}
	if errs := gather(t, r.m.reg, "switchyard_connection_config_error"); len(errs) != 0 {
		t.Fatalf("config_error after the fix: %v, want none", errs)
	}
	if got := gather(t, r.m.reg, "switchyard_connection_loaded")["connection=nas"]; got != 1 {
		t.Fatalf("loaded after the fix: %v", got)
	}
	if got := gather(t, r.m.reg, "switchyard_connection_reloads_total")["connection=nas"]; got != 2 {
		t.Fatalf("reloads after the fix: %v, want 2", got)
	}
	if ts := gather(t, r.m.reg, "switchyard_connection_last_reload_timestamp_seconds")["connection=nas"]; ts < 1e9 {
		t.Fatalf("last reload timestamp %v", ts)
	}
	// Calls of each connection counted under its name, errors by code.
	calls := gather(t, r.m.reg, "switchyard_csi_calls_total")
	if calls["connection=nas,method=CreateVolume"] != 3 || calls["connection=good,method=CreateVolume"] != 1 {
		t.Fatalf("calls %v", calls)
	}
	if e := gather(t, r.m.reg, "switchyard_csi_call_errors_total"); e["code=FailedPrecondition,connection=nas,method=CreateVolume"] != 2 {
		t.Fatalf("errors %v", e)
	}

	// Broken again, then removed: the removal drops the state series and
	// later calls naming it count as unknown.
	r.write("nas", "driver: teleport\n")
	_, _ = r.create("nas", "pvc-4")
	if errs := gather(t, r.m.reg, "switchyard_connection_config_error"); errs["connection=nas,file="+broken] != 1 {
		t.Fatalf("broken again: %v", errs)
	}
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	_, _ = r.create("nas", "pvc-5")
	if errs := gather(t, r.m.reg, "switchyard_connection_config_error"); len(errs) != 0 {
		t.Fatalf("config_error of a removed file: %v", errs)
	}
	if _, ok := gather(t, r.m.reg, "switchyard_connection_loaded")["connection=nas"]; ok {
		t.Fatal("loaded series of a removed connection")
	}
	if got := gather(t, r.m.reg, "switchyard_csi_calls_total")["connection=_unknown,method=CreateVolume"]; got != 1 {
		t.Fatalf("a call naming a removed connection: %v under _unknown, want 1", got)
	}
}

// Handles and parameters full of garbage, and well-formed names of
// connections that have no file, never become label values: the
// connection label stays within the configured connections and the fixed
// values however many distinct strings requests carry.
func TestGarbageCreatesNoLabelValues(t *testing.T) {
	r := newProxyRig(t)
	r.hostpath("good")
	v, err := r.create("good", "pvc-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.validate(v.GetVolume().GetVolumeId()); err != nil {
		t.Fatal(err)
	}
	garbage := []string{"", "../../etc/passwd", "a/b", "\x00", strings.Repeat("x", 5000), "ünïcode", "good ", "GOOD", "_none", "_unknown", "-x"}
	for i := range 200 {
		garbage = append(garbage, fmt.Sprintf("conn-%d", i))
	}
	for _, g := range garbage {
		_, _ = r.create(g, "pvc-g")
		_ = r.validate("v:" + g + "/id")
		_ = r.validate(g)
		_ = r.validate("s:" + g + "/id")
	}
	got := connectionLabels(t, r.m.reg)
	want := map[string]bool{"good": true, UnknownConnection: true, NoConnection: true} // "" names none
	if len(got) != len(want) {
		t.Fatalf("connection label values %v, want exactly %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("connection label values %v, want exactly %v", got, want)
		}
	}
	calls := gather(t, r.m.reg, "switchyard_csi_calls_total")
	// Every garbage validation is counted: under _unknown, the empty
	// handle under _none.
	if n, e := calls["connection=_unknown,method=ValidateVolumeCapabilities"], calls["connection=_none,method=ValidateVolumeCapabilities"]; n != float64(3*len(garbage)-1) || e != 1 {
		t.Fatalf("garbage validations counted %v unknown + %v none, want %d + 1", n, e, 3*len(garbage)-1)
	}
}
