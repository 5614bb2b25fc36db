package sanity

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// setsTargets are connection sets (docs/proxy.md, "Connection sets"):
// csi-sanity's volumes are made through a StorageClass naming two
// local-hostpath connections, so every create goes through the choice and
// the lookup on each member, and every later call routes by the handle of
// the member that was chosen. One target names the members, one selects
// them by label.
func setsTargets() []target {
	const main = "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n  nodeTopology:\n    type: node\n"
	member := func(sub, labels string) string {
		return "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: {{dir}}/" + sub + "\n  controllerBasePath: {{dir}}/" + sub + "\n" + labels
	}
	return []target{
		{
			name: "local-hostpath/proxy-set",
			main: main,
			connections: map[string]string{
				"set-a": member("a", ""),
				"set-b": member("b", ""),
			},
			params: map[string]string{"connections": "set-a,set-b"},
		},
		{
			name: "local-hostpath/proxy-selector",
			main: main,
			connections: map[string]string{
				"sel-a":   member("a", "proxy:\n  labels:\n    tier: fast\n"),
				"sel-b":   member("b", "proxy:\n  labels:\n    tier: fast\n"),
				"other-c": member("c", "proxy:\n  labels:\n    tier: slow\n"),
			},
			params: map[string]string{"connectionSelector": "tier=fast"},
		},
	}
}

// The set targets are part of every sanity run.
func init() { targets = append(targets, setsTargets()...) }

// TestSanitySets runs csi-sanity on the set targets alone, for working on
// them without starting every simulated host:
//
//	SANITY_SETS=1 go test -count=1 ./sanity -run 'TestSanitySets$'
//
// It is off otherwise: TestSanity covers these targets, and Ginkgo runs
// one suite per process.
func TestSanitySets(t *testing.T) {
	if os.Getenv("SANITY_SETS") == "" {
		t.Skip("set SANITY_SETS=1 to run only the connection-set targets (TestSanity runs them with the rest)")
	}
	testtier.NeedRoot(t)
	base := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i, tg := range setsTargets() {
		dir := filepath.Join(base, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mainFile, err := writeTarget(tg, dir, func(host, driver, name string) string {
			t.Fatalf("set targets use no simulated host (%s %s %s)", host, driver, name)
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(dir, "csi.sock")
		t.Cleanup(serve(t, mainFile, filepath.Join(dir, "node-state"), sock, log))
		cfg := sanity.NewTestConfig()
		cfg.Address = "unix://" + sock
		cfg.TargetPath = filepath.Join(dir, "target")
		cfg.StagingPath = filepath.Join(dir, "staging")
		cfg.TestVolumeParameters = tg.params
		cfg.TestVolumeSize = 1 << 30
		cfg.IdempotentCount = 3
		Describe(tg.name, func() { sanity.GinkgoTest(&cfg) })
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "csi-sanity connection sets")
}
