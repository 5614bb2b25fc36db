package nodemanual_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/assembly"
	"github.com/switchyard-csi/switchyard/driver/config"
	_ "github.com/switchyard-csi/switchyard/driver/nodemanual"
)

// TestStandaloneAdvertisesNodeOnly: a standalone node-manual plugin
// advertises no CONTROLLER_SERVICE and no expansion (as democratic-csi's:
// there is nothing to provision, so no external-provisioner or attacher
// must wait on it), and its node no EXPAND_VOLUME; the service override
// of democratic-csi's config still applies.
func TestStandaloneAdvertisesNodeOnly(t *testing.T) {
	ctx := context.Background()
	build := func(t *testing.T, cfg config.Tree) *assembly.Plugin {
		t.Helper()
		p, err := assembly.New(assembly.Options{Config: cfg, Modes: []string{assembly.ModeController, assembly.ModeNode},
			NodeName: "n1", StateDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	p := build(t, config.Tree{"driver": "node-manual"})
	pc, err := p.Identity.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pc.GetCapabilities()); n != 0 {
		t.Fatalf("plugin capabilities %v, want none", pc.GetCapabilities())
	}
	nc, err := p.Node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var rpcs []string
	for _, c := range nc.GetCapabilities() {
		rpcs = append(rpcs, c.GetRpc().GetType().String())
	}
	if want := []string{"STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS", "SINGLE_NODE_MULTI_WRITER", "GET_VOLUME_HEALTH"}; !slices.Equal(rpcs, want) {
		t.Fatalf("node capabilities %v, want %v", rpcs, want)
	}

	p = build(t, config.Tree{"driver": "node-manual", "service": map[string]any{"identity": map[string]any{"capabilities": map[string]any{
		"service": []any{"CONTROLLER_SERVICE"}}}}})
	pc, err = p.Identity.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.GetCapabilities()) != 1 || pc.GetCapabilities()[0].GetService().GetType() != csi.PluginCapability_Service_CONTROLLER_SERVICE {
		t.Fatalf("with the override: %v, want CONTROLLER_SERVICE", pc.GetCapabilities())
	}
}
