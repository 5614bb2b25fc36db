package localhostpath

import (
	"log/slog"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

const (
	testNode  = "node-a"
	testShare = "/var/lib/csi-local-hostpath"
	gib       = int64(1) << 30
)

// testConfig is a valid config with the controller base in a temp dir.
func testConfig(base string) config.Tree {
	return config.Tree{
		"driver": "local-hostpath",
		"local-hostpath": map[string]any{
			"shareBasePath":      testShare + "/",
			"controllerBasePath": base,
		},
	}
}

// newTestDriver builds a driver on a fresh temp dir; edit may change the
// config first.
func newTestDriver(t testing.TB, edit func(cfg config.Tree)) (*Driver, string) {
	t.Helper()
	base := t.TempDir()
	cfg := testConfig(base)
	if edit != nil {
		edit(cfg)
	}
	d, err := New(backend.Options{Config: cfg, NodeName: testNode, File: "test.yaml", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d, base
}

func section(cfg config.Tree) map[string]any { return cfg["local-hostpath"].(map[string]any) }
