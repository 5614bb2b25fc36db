package dirvol

import (
	"log/slog"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/config"
)

const (
	testShare = "/var/lib/csi-dirs"
	gib       = int64(1) << 30
)

// Driver is what the tests drive: a Controller over testBackend.
type Driver = Controller

// testBackend is the smallest backend over a Controller: mount access
// only, volumes reachable everywhere, nodes find them at testShare/v/<id>.
type testBackend struct {
	share string
	// notReady, when set, is what Ready answers (a share not mounted).
	notReady error
}

func (b testBackend) Ready(string) error                          { return b.notReady }
func (testBackend) CheckRequisite(*csi.TopologyRequirement) error { return nil }
func (testBackend) CapacityFor(*csi.Topology) (bool, error)       { return true, nil }
func (testBackend) Topology() []*csi.Topology                     { return nil }
func (b testBackend) VolumeContext(id string) map[string]string {
	return map[string]string{"path": b.share + "/v/" + id}
}
func (testBackend) CheckCapability(c *csi.VolumeCapability) string {
	switch {
	case c == nil:
		return "a volume capability is empty"
	case c.GetMount() == nil:
		return "test volumes need mount access"
	case c.GetMount().GetFsType() != "":
		return "test volumes take no fs_type"
	case c.GetAccessMode() == nil:
		return "a volume capability has no access_mode"
	}
	return ""
}

// testFlavor is local-hostpath's: every fast path on, so the tests cover
// them; dirPermissions* turn the empty-volume one off per config.
var testFlavor = Flavor{ErrPrefix: "dirs", Family: "dirs", Product: "dirs", FastEmpty: true, CacheMeta: true, CacheLists: true}

const testSection = "dirs"

// testConfig is a valid config with the controller base in a temp dir.
func testConfig(base string) config.Tree {
	return config.Tree{
		"driver": "dirs",
		testSection: map[string]any{
			"shareBasePath":      testShare + "/",
			"controllerBasePath": base,
		},
	}
}

// newTestDriver builds a controller on a fresh temp dir; edit may change
// the config first.
func newTestDriver(t testing.TB, edit func(cfg config.Tree)) (*Driver, string) {
	t.Helper()
	base := t.TempDir()
	cfg := testConfig(base)
	if edit != nil {
		edit(cfg)
	}
	s, problems := Parse(cfg, Section{Key: testSection, Needs: "shareBasePath and controllerBasePath"})
	if len(problems) > 0 {
		t.Fatalf("config: %v", problems)
	}
	return NewController(testFlavor, s, testBackend{share: s.ShareBase}, slog.New(slog.DiscardHandler)), base
}

func section(cfg config.Tree) map[string]any { return cfg[testSection].(map[string]any) }
