package sanity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends"
	"github.com/switchyard-csi/switchyard/driver/assembly"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// skipped lists every csi-sanity skip this project expects, keyed by the
// message csi-sanity skips with, with the reason. Any other skip fails the
// suite, so a capability that silently disappears is noticed.
var skipped = map[string]string{
	"Controller Publish, UnpublishVolume not supported": "PUBLISH_UNPUBLISH_VOLUME is not advertised: this configuration has no controller attach step (only Infinia and hostAccess: allowList connections have)",
	"ControllerPublishVolume not supported":             "PUBLISH_UNPUBLISH_VOLUME is not advertised: this configuration has no controller attach step (only Infinia and hostAccess: allowList connections have)",
	"ControllerUnpublishVolume not supported":           "PUBLISH_UNPUBLISH_VOLUME is not advertised: this configuration has no controller attach step (only Infinia and hostAccess: allowList connections have)",
	"ControllerModifyVolume not supported":              "MODIFY_VOLUME is not advertised: this target's backend has no mutable parameters (docs/features.md)",
	"Modify volume not supported":                       "MODIFY_VOLUME is not advertised: this target's backend has no mutable parameters (docs/features.md)",
	"Modify Volume not supported":                       "MODIFY_VOLUME is not advertised: this target's backend has no mutable parameters (docs/features.md)",
	"ControllerGetVolumeHealth not supported":           "volume health is not advertised by this target's backend (docs/features.md)",
	"ControllerListVolumeHealth not supported":          "volume health is not advertised by this target's backend (docs/features.md)",
	"NodeGetVolumeHealth not supported":                 "volume health is not advertised by this target's backend (docs/features.md)",
	"NodeGetStorageHealth not supported":                "volume health is not advertised by this target's backend (docs/features.md)",
	"GroupControllerService not supported":              "no group snapshots: this target's backend has no atomic group snapshot (docs/features.md)",
	"SNAPSHOT_ACCESSIBILITY_CONSTRAINTS not supported":  "snapshots carry no topology of their own",
	// Infinia: DDN's driver offers neither snapshots nor clones, and an
	// Infinia host grant has no read-only flag.
	"Snapshot not supported":                               "no snapshots: Infinia block volumes have none (as DDN's driver)",
	"CreateSnapshot not supported":                         "no snapshots: Infinia block volumes have none (as DDN's driver)",
	"DeleteSnapshot not supported":                         "no snapshots: Infinia block volumes have none (as DDN's driver)",
	"ListSnapshots not supported":                          "no snapshots: Infinia block volumes have none (as DDN's driver)",
	"GetSnapshot not supported":                            "no snapshots: Infinia block volumes have none (as DDN's driver)",
	"Volume Cloning not supported":                         "no clones: Infinia block volumes have none (as DDN's driver)",
	"testnodevolumeattachlimit not enabled":                "csi-sanity's node attach-limit spec is off (TestNodeVolumeAttachLimit): nodes report no max_volumes_per_node",
	"ControllerPublishVolume.readonly field not supported": "PUBLISH_READONLY is not advertised: a host grant (Infinia, or an allow-list ACL/NQN link) has no read-only flag (the node mounts ro)",
}

// pending lists specs csi-test itself marks pending (PIt), by their text.
var pending = map[string]string{
	"should detect volumes added between pages and accept tokens when the last volume from a page is deleted": "pending upstream in csi-test v5.6.0",
}

const nodeName = "sanity-node"

func TestSanity(t *testing.T) {
	testtier.NeedRoot(t)
	base := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SANITY_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	hosts := &simHosts{base: base}
	hosts.useKernel(t)
	t.Cleanup(hosts.close)
	for i, tg := range activeTargets() {
		dir := filepath.Join(base, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mainFile, err := writeTarget(tg, dir, func(host, driver, name string) string {
			c, err := hosts.config(host, driver, name)
			if err != nil {
				t.Fatal(err)
			}
			return c
		})
		if err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(dir, "csi.sock")
		stop := serve(t, mainFile, filepath.Join(dir, "node-state"), sock, log)
		t.Cleanup(stop)

		cfg := sanity.NewTestConfig()
		cfg.Address = "unix://" + sock
		cfg.TargetPath = filepath.Join(dir, "target")
		cfg.StagingPath = filepath.Join(dir, "staging")
		cfg.TestVolumeParameters = tg.params
		cfg.TestVolumeSize = 1 << 30
		cfg.IdempotentCount = 3
		if tg.accessType != "" {
			cfg.TestVolumeAccessType = tg.accessType
		}
		if len(tg.nodeSecrets) > 0 {
			cfg.SecretsFile = filepath.Join(dir, "secrets.yaml")
			if err := os.WriteFile(cfg.SecretsFile, []byte(secretsYAML(tg.nodeSecrets)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		noNode := tg.noNode
		Describe(tg.name, func() {
			if noNode != "" {
				BeforeEach(func() {
					if strings.Contains(CurrentSpecReport().FullText(), "Node Service") {
						Skip(noNodeMessage + noNode)
					}
				})
			}
			sanity.GinkgoTest(&cfg)
		})
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "csi-sanity")
}

// serve starts the plugin described by mainFile on a unix socket.
func serve(t testing.TB, mainFile, stateDir, sock string, log *slog.Logger) func() {
	p, err := assembly.New(assembly.Options{ConfigFile: mainFile, CSIName: "org.switchyard.sanity", CSIVersion: "test",
		NodeName: nodeName, StateDir: stateDir, Logger: log, NodeFacts: nodeid.Facts{ReadFile: hostFile}})
	if err != nil {
		t.Fatalf("%s: %v", mainFile, err)
	}
	srv := p.NewServer(log)
	l, err := csisrv.Listen("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	p.Identity.SetReady(true)
	go srv.Serve(l)
	return func() { srv.Stop(context.Background()); p.Close() }
}

// sanityHostNQN stands in for /etc/nvme/hostnqn where nvme-cli is not
// installed (this host: node specs of NVMe backends run in the VM, which
// has the file).
const sanityHostNQN = "nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-000000000001"

// sanityIQN stands in for /etc/iscsi/initiatorname.iscsi likewise.
const sanityIQN = "iqn.1993-08.org.debian:01:5a4e17e50001"

func hostFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && path == nodeid.NQNFile {
		return []byte(sanityHostNQN + "\n"), nil
	}
	if errors.Is(err, fs.ErrNotExist) && path == nodeid.IQNFile {
		return []byte("InitiatorName=" + sanityIQN + "\n"), nil
	}
	return data, err
}

// The per-configuration counts `make sanity` prints, and the check that
// every skip is one the list above explains.
var _ = ReportAfterSuite("counts", func(r Report) {
	type counts struct {
		passed, failed, skipped int
		reasons                 map[string]int
	}
	var skips strings.Builder
	per := map[string]*counts{}
	var unexplained []string
	// With -ginkgo.focus/skip (a run of a few configurations), the specs
	// filtered out are skipped without a message: they did not run, so
	// they are left out of the counts rather than reported as unexplained.
	sc := r.SuiteConfig
	filtering := len(sc.FocusStrings)+len(sc.SkipStrings)+len(sc.FocusFiles)+len(sc.SkipFiles) > 0 || sc.LabelFilter != ""
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || len(s.ContainerHierarchyTexts) == 0 {
			continue
		}
		if filtering && s.State.Is(types.SpecStateSkipped) && s.Failure.Message == "" {
			continue
		}
		name := s.ContainerHierarchyTexts[0]
		c := per[name]
		if c == nil {
			c = &counts{}
			per[name] = c
		}
		switch {
		case s.State.Is(types.SpecStatePassed):
			c.passed++
		case s.State.Is(types.SpecStateSkipped | types.SpecStatePending):
			c.skipped++
			why := explain(s.FullText(), s.Failure.Message)
			if why == "" {
				unexplained = append(unexplained, s.FullText()+": "+s.Failure.Message)
			}
			if c.reasons == nil {
				c.reasons = map[string]int{}
			}
			c.reasons[why]++
			fmt.Fprintf(&skips, "%s\n    %s\n", s.FullText(), why)
		default:
			c.failed++
		}
	}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintln(&b, "csi-sanity results (skips are explained in sanity/sanity_test.go)")
	fmt.Fprintf(&b, "%-40s %7s %7s %8s\n", "configuration", "passed", "failed", "skipped")
	for _, n := range names {
		c := per[n]
		fmt.Fprintf(&b, "%-40s %7d %7d %8d\n", n, c.passed, c.failed, c.skipped)
	}
	// Skips grouped by reason: how many specs each configuration skipped
	// for it. The full list, spec by spec, is in $SANITY_REPORT.skips.
	byReason := map[string][]string{}
	for _, n := range names {
		for why, k := range per[n].reasons {
			byReason[why] = append(byReason[why], fmt.Sprintf("%s %d", n, k))
		}
	}
	reasons := make([]string, 0, len(byReason))
	for why := range byReason {
		reasons = append(reasons, why)
	}
	sort.Strings(reasons)
	fmt.Fprintln(&b, "skipped, by reason (configuration and count):")
	for _, why := range reasons {
		fmt.Fprintf(&b, "- %s\n    %s\n", why, strings.Join(byReason[why], ", "))
	}
	fmt.Fprint(os.Stdout, b.String())
	if path := os.Getenv("SANITY_REPORT"); path != "" {
		Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		Expect(os.WriteFile(path, []byte(b.String()), 0o644)).To(Succeed())
		// Every skipped spec, one by one, with its reason.
		Expect(os.WriteFile(path+".skips", []byte(skips.String()), 0o644)).To(Succeed())
	}
	Expect(unexplained).To(BeEmpty(), "skipped specs without a reason in sanity_test.go")
})

// noNodeMessage starts the skip message of node specs a target cannot run
// here; the target's noNode reason follows it.
const noNodeMessage = "node specs excluded: "

func explain(spec, message string) string {
	if why := skipped[message]; why != "" {
		return why
	}
	if why, ok := strings.CutPrefix(message, noNodeMessage); ok && why != "" {
		return why
	}
	for text, why := range pending {
		if strings.Contains(spec, text) {
			return why
		}
	}
	return ""
}

// secretsYAML is csi-sanity's secrets file with node stage secrets.
func secretsYAML(node map[string]string) string {
	var b strings.Builder
	b.WriteString("NodeStageVolumeSecret:\n")
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %q\n", k, node[k])
	}
	return b.String()
}
