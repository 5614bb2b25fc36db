package proxy

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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
)

// rig is a proxy controller over a temporary connections folder.
type rig struct {
	t      testing.TB
	dir    string // parent of the folder, to catch path escapes
	folder string
	set    *Settings
	conns  *Connections
	ctl    *Controller
}

func newRig(t testing.TB, mutate ...func(*Settings)) *rig {
	t.Helper()
	dir := t.TempDir()
	folder := filepath.Join(dir, "connections")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	set := &Settings{ConfigFolder: folder, Topology: TopologySettings{Type: TopologyCluster, Prefix: DefaultTopologyPrefix}, NodeID: nodeid.Settings{NodeName: true}}
	for _, m := range mutate {
		m(set)
	}
	main := config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": folder}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	conns := NewConnections(set, main, backend.Options{NodeName: "node-1", CSIName: "test.csi", Logger: log})
	t.Cleanup(conns.Close)
	return &rig{t: t, dir: dir, folder: folder, set: set, conns: conns, ctl: NewController(conns, set, nil, log)}
}

// write puts a connection file in the folder.
func (r *rig) write(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.folder, name+".yaml"), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// fake writes a fake-backend connection with a unique label and returns it.
func (r *rig) fake(name string, extra ...string) string {
	label := fmt.Sprintf("%s-%s", r.t.Name(), name)
	r.write(name, "driver: fake-test\nfake:\n  label: "+label+"\n"+strings.Join(extra, "\n"))
	return label
}

func (r *rig) create(conn, name string) (*csipb.CreateVolumeResponse, error) {
	params := map[string]string{}
	if conn != "" {
		params[ConnectionParameter] = conn
	}
	return r.ctl.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: name, Parameters: params,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}})
}

var mountCap = []*csipb.VolumeCapability{{
	AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}}

func (r *rig) validate(handle string) error {
	_, err := r.ctl.ValidateVolumeCapabilities(context.Background(), &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: handle, VolumeCapabilities: mountCap})
	return err
}

// wantCode fails unless err has the code and its message mentions every word.
func wantCode(t *testing.T, what string, err error, code codes.Code, words ...string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code {
		t.Fatalf("%s: got %v (%q); want %v", what, st.Code(), st.Message(), code)
	}
	for _, w := range words {
		if !strings.Contains(st.Message(), w) {
			t.Fatalf("%s: message %q does not mention %q", what, st.Message(), w)
		}
	}
}
