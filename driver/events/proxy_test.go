package events

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	_ "github.com/switchyard-csi/switchyard/driver/localhostpath" // a backend that needs no root
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// TestProxyBrokenFileEvent: the real proxy over a connections folder, with
// the Recorder as its observer (as cmd/switchyard wires it): a file broken
// by an update makes one Warning Event naming it while the other
// connection keeps serving, and the fixed file makes a Normal one.
func TestProxyBrokenFileEvent(t *testing.T) {
	a := newAPIServer(t)
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
	r := New(testOptions(a))
	conns.SetObserver(r)
	ctl := proxy.NewController(conns, set, nil, log)

	write := func(name, content string) string {
		f := filepath.Join(folder, name+".yaml")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	hostpath := func(name string) string {
		base := filepath.Join(dir, "data-"+name)
		return write(name, fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %s\n  controllerBasePath: %s\n", base, base))
	}
	create := func(conn, name string) error {
		_, err := ctl.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: name,
			Parameters: map[string]string{proxy.ConnectionParameter: conn},
			VolumeCapabilities: []*csipb.VolumeCapability{{
				AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
				AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
			}},
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}})
		return err
	}

	hostpath("good")
	hostpath("nas")
	if err := create("nas", "pvc-1"); err != nil {
		t.Fatal(err)
	}
	// The Secret is updated with a broken file. (A later mtime: the proxy
	// notices a new version by its stamp.)
	time.Sleep(20 * time.Millisecond)
	broken := write("nas", "driver: [\n")
	if err := create("nas", "pvc-2"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a broken file: %v, want FAILED_PRECONDITION", err)
	}
	if err := create("nas", "pvc-3"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("still broken: %v", err)
	}
	if err := create("good", "pvc-1"); err != nil {
		t.Fatalf("the other connection stopped serving: %v", err)
	}
	c := a.waitCalls(t, 1)
	if len(c) != 1 || c[0].body["type"] != "Warning" || !strings.Contains(c[0].body["note"].(string), broken) {
		t.Fatalf("calls %+v, want one Warning naming %s", c, broken)
	}
	time.Sleep(20 * time.Millisecond)
	hostpath("nas")
	if err := create("nas", "pvc-4"); err != nil {
		t.Fatalf("the fixed file: %v", err)
	}
	r.Close(2 * time.Second)
	c = a.got()
	if len(c) != 2 || c[1].body["type"] != "Normal" || c[1].body["reason"] != ReasonConnectionLoaded {
		t.Fatalf("calls %+v, want the Warning then a Normal event", c)
	}
}
