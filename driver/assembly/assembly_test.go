package assembly

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/config"
	_ "github.com/switchyard-csi/switchyard/driver/localhostpath"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewRejectsBadMainConfigs(t *testing.T) {
	tests := []struct {
		yaml  string
		words []string
	}{
		{"", []string{"driver: required"}},
		{"driver: teleport\n", []string{"unknown driver \"teleport\"", "local-hostpath"}},
		{"driver: objectivefs\n", []string{"objectivefs cannot be used in switchyard"}},
		{"driver: synology-iscsi\n", []string{"synology-iscsi is not available in this build"}},
		{"driver: proxy\n", []string{"proxy: required"}},
		{"driver: proxy\nproxy:\n  configFolder: /c\n  cacheTimeoutMinutes: x\n", []string{"proxy.cacheTimeoutMinutes"}},
		{"driver: local-hostpath\n", []string{"local-hostpath"}},
		{"driver: proxy\nproxy:\n  configFolder: /c\nservice:\n  controller:\n    capabilities:\n      rpc: [FLY]\n", []string{"service.controller.capabilities.rpc", "FLY"}},
	}
	for _, tt := range tests {
		file := writeFile(t, filepath.Join(t.TempDir(), "main.yaml"), tt.yaml)
		_, err := New(Options{ConfigFile: file, NodeName: "n", StateDir: t.TempDir(), Logger: quiet})
		if err == nil {
			t.Errorf("%q: accepted", tt.yaml)
			continue
		}
		for _, w := range append(tt.words, file) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not mention %q", tt.yaml, err, w)
			}
		}
	}
}

func TestProxyNodeNeedsNodeName(t *testing.T) {
	_, err := New(Options{Config: config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": t.TempDir()}},
		Modes: []string{ModeNode}, StateDir: t.TempDir(), Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "CSI_NODE_ID") {
		t.Fatalf("node without CSI_NODE_ID: %v; want an error naming CSI_NODE_ID", err)
	}
	// The controller alone does not need it.
	p, err := New(Options{Config: config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": t.TempDir()}},
		Modes: []string{ModeController}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

func TestStandaloneLocalHostpathReportsNodeTopology(t *testing.T) {
	dir := t.TempDir()
	p, err := New(Options{Config: config.Tree{"driver": "local-hostpath", "local-hostpath": map[string]any{"shareBasePath": dir, "controllerBasePath": dir}},
		NodeName: "node-7", StateDir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	info, err := p.Node.NodeGetInfo(context.Background(), &csipb.NodeGetInfoRequest{})
	if err != nil || info.GetNodeId() != "node-7" || info.GetAccessibleTopology().GetSegments()["org.democratic-csi.topology/node"] != "node-7" {
		t.Fatalf("NodeGetInfo = %v, %v", info, err)
	}
	caps, _ := p.Identity.GetPluginCapabilities(context.Background(), nil)
	if !strings.Contains(caps.String(), "VOLUME_ACCESSIBILITY_CONSTRAINTS") {
		t.Fatalf("a node-local backend must advertise accessibility constraints: %v", caps)
	}
}

func TestCapabilityOverride(t *testing.T) {
	p, err := New(Options{Config: config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": t.TempDir()},
		"service": map[string]any{"controller": map[string]any{"capabilities": map[string]any{"rpc": []any{"CREATE_DELETE_VOLUME"}}}}},
		Modes: []string{ModeController}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, _ := p.Controller.ControllerGetCapabilities(context.Background(), &csipb.ControllerGetCapabilitiesRequest{})
	if len(resp.GetCapabilities()) != 1 || resp.GetCapabilities()[0].GetRpc().GetType() != csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME {
		t.Fatalf("override not applied: %v", resp)
	}
}

// A single-backend deployment switches to the proxy: with defaultConnection
// its existing, un-prefixed handles are expanded, snapshotted and deleted
// through the proxy, while new volumes get prefixed handles.
func TestMigrationFromSingleBackend(t *testing.T) {
	dir := t.TempDir()
	hostpath := map[string]any{"shareBasePath": filepath.Join(dir, "data"), "controllerBasePath": filepath.Join(dir, "data")}
	ctx := context.Background()
	caps := []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}

	before, err := New(Options{Config: config.Tree{"driver": "local-hostpath", "local-hostpath": hostpath}, NodeName: "n1", Modes: []string{ModeController}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	old, err := before.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-old", VolumeCapabilities: caps, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	before.Close()
	if id := old.GetVolume().GetVolumeId(); id != "pvc-old" {
		t.Fatalf("standalone handle %q", id)
	}

	writeFile(t, filepath.Join(dir, "conns", "main.yaml"), "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+hostpath["shareBasePath"].(string)+"\n  controllerBasePath: "+hostpath["controllerBasePath"].(string)+"\n")
	after, err := New(Options{Config: config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": filepath.Join(dir, "conns"), "defaultConnection": "main", "nodeTopology": map[string]any{"type": "node"}}},
		NodeName: "n1", Modes: []string{ModeController}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	c := after.Controller
	if _, err := c.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "pvc-old", CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 << 20}}); err != nil {
		t.Fatalf("expand a legacy volume: %v", err)
	}
	snap, err := c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-old", SourceVolumeId: "pvc-old"})
	if err != nil || snap.GetSnapshot().GetSnapshotId() != "s:main/snap-old" {
		t.Fatalf("snapshot a legacy volume: %v, %v", snap, err)
	}
	if _, err := c.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
		t.Fatal(err)
	}
	fresh, err := c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-new", VolumeCapabilities: caps})
	if err != nil || fresh.GetVolume().GetVolumeId() != "v:main/pvc-new" {
		t.Fatalf("new volume = %v, %v; want a prefixed handle", fresh, err)
	}
	if _, err := c.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: "pvc-old"}); err != nil {
		t.Fatalf("delete a legacy volume: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "v", "pvc-old")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("legacy volume directory still there: %v", err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	conns := filepath.Join(dir, "conns")
	writeFile(t, filepath.Join(conns, "good.yaml"), "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: /x\n  controllerBasePath: /x\n")
	writeFile(t, filepath.Join(conns, "nokey.yaml"), "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: /x\n")
	writeFile(t, filepath.Join(conns, "bad name.yaml"), "driver: local-hostpath\n")
	writeFile(t, filepath.Join(conns, "nested.yaml"), "driver: proxy\n")
	writeFile(t, filepath.Join(conns, "zfs.yaml"), "driver: synology-iscsi\n")
	writeFile(t, filepath.Join(conns, strings.Repeat("l", 62)+".yaml"), "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: /x\n  controllerBasePath: /x\n")
	main := writeFile(t, filepath.Join(dir, "main.yaml"), "driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n")
	ps := Check(main)
	want := []string{
		"nokey.yaml: local-hostpath.controllerBasePath",
		"bad name.yaml: the file name is not a usable connection name",
		"nested.yaml: driver: proxy cannot be used behind the proxy",
		"zfs.yaml: driver: synology-iscsi is not available in this build",
		strings.Repeat("l", 62) + ".yaml: connection name",
	}
	got := ps.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("Check output lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "good.yaml") {
		t.Errorf("good.yaml reported:\n%s", got)
	}
	// Clean up the bad files: the folder checks out.
	for _, f := range []string{"nokey", "bad name", "nested", "zfs", strings.Repeat("l", 62)} {
		os.Remove(filepath.Join(conns, f+".yaml"))
	}
	if ps := Check(main); len(ps) != 0 {
		t.Fatalf("a good config: %v", ps)
	}
}

// A node-local backend behind a proxy with its own topology prefix labels
// volumes with the key its nodes report, so pods can be scheduled.
func TestNodeLocalFollowsTopologyPrefix(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "conns", "hp.yaml"), "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+dir+"/d\n  controllerBasePath: "+dir+"/d\n")
	p, err := New(Options{Config: config.Tree{"driver": "proxy", "proxy": map[string]any{"configFolder": filepath.Join(dir, "conns"),
		"nodeTopology": map[string]any{"type": "node", "prefix": "example.io"}}}, NodeName: "n1", StateDir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	info, _ := p.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
	vol, err := p.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-1", Parameters: map[string]string{"connection": "hp"},
		VolumeCapabilities: []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
			AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := vol.GetVolume().GetAccessibleTopology()[0].GetSegments()
	want := info.GetAccessibleTopology().GetSegments()
	if len(got) != 1 || got["example.io/node"] != "n1" || want["example.io/node"] != "n1" {
		t.Fatalf("volume topology %v, node topology %v; want both example.io/node=n1", got, want)
	}
}
