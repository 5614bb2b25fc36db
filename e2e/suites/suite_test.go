// Package suites holds the Ginkgo specs that run against a cluster with
// switchyard installed: the data path of every backend family, the three
// topology modes, the handle-length limits, live reload of connection
// files and the bad-input cases. `make e2e` starts the cluster, installs
// the chart and runs them; docs/testing.md says how to run them by hand.
package suites

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

var (
	f   *framework.F
	env *backends.Env
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switchyard e2e")
}

// required says whether LAB_REQUIRE asks for the cluster tier: then a
// cluster that is not there fails the run instead of skipping it (the
// rule of lab/testtier, which this module cannot import).
func required() bool {
	for _, t := range strings.Split(os.Getenv("LAB_REQUIRE"), ",") {
		if t = strings.TrimSpace(t); t == "cluster" || t == "all" {
			return true
		}
	}
	return false
}

// skipOrFail skips the spec with why, or fails it when LAB_REQUIRE
// names the cluster tier and the reason is the lab, not the spec.
func skipOrFail(why string) {
	GinkgoHelper()
	if required() {
		Fail("tier \"cluster\" is required (LAB_REQUIRE) but this spec cannot run: " + why)
	}
	Skip(why)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	cfg, err := framework.LoadConfig()
	if err != nil {
		skipOrFail("tier \"cluster\" skipped: " + err.Error())
	}
	f, err = framework.New(ctx, cfg)
	Expect(err).NotTo(HaveOccurred())
	lab, err := backends.LoadLab(cfg.LabFile)
	Expect(err).NotTo(HaveOccurred())
	env = &backends.Env{Lab: lab, HostPathBase: cfg.HostPathBase, HostPathHostBase: cfg.HostPathHostBase}
	Expect(os.MkdirAll(cfg.Artifacts, 0o755)).To(Succeed())
	GinkgoWriter.Printf("cluster %s (provider %s), driver %s in namespace %s, connections in %s, artifacts in %s\n",
		cfg.Kubeconfig, cfg.Provider, cfg.DriverName, cfg.DriverNamespace, f.Conns, cfg.Artifacts)
}, NodeTimeout(time.Minute))

var _ = BeforeEach(func() {
	if f != nil {
		f.ResetSpec()
	}
})

// A failed spec leaves its evidence before its cleanups remove it.
var _ = JustAfterEach(func(ctx SpecContext) {
	r := CurrentSpecReport()
	if f == nil || !r.Failed() {
		return
	}
	dir := f.Dump(ctx, r.FullText(), f.SpecNamespaces())
	AddReportEntry("failure dump", dir)
	GinkgoWriter.Printf("failure dump: %s\n", dir)
}, NodeTimeout(2*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if f == nil {
		return
	}
	clientsRel.uninstall(ctx)
	table := f.Timings.Table()
	fmt.Fprintf(os.Stdout, "\nswitchyard e2e timings (%s provider):\n%s\n", f.Config.Provider, table)
	if err := f.Timings.Write(f.Config.Artifacts); err != nil {
		fmt.Fprintf(os.Stdout, "writing the timings: %v\n", err)
	}
}, NodeTimeout(6*time.Minute))

// nodeFor picks the node a family's pods run on: the storage VM's node
// for families that need kernel storage clients, else the host's node.
func nodeFor(ctx context.Context, fam backends.Family) string {
	GinkgoHelper()
	if fam.NeedsVM {
		if env.Lab.VMNode == "" {
			skipOrFail(fam.Name + " needs the storage VM's node, and E2E_LAB_FILE names none (switchyard-lab cluster up --vm)")
		}
		return env.Lab.VMNode
	}
	if env.Lab.HostNode != "" {
		return env.Lab.HostNode
	}
	for _, n := range f.RealNodes(ctx) {
		if n.Name != env.Lab.VMNode {
			return n.Name
		}
	}
	skipOrFail("no Ready node on the host")
	return ""
}
