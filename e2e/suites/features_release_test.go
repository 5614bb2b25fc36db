package suites

// The features release: a second install of the chart whose controller is
// a Deployment (e2e/deploy/features-values.yaml), for the data-path specs
// of issue 19's features. A VolumeGroupSnapshot needs a csi-snapshotter
// that is not in per-node mode, and the main release runs its controller
// per node for local-hostpath (docs/features.md, "Cluster pieces").
// Installed by the first spec that needs it, over the main release's own
// values (the lab's images), and removed after the last.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/framework"
)

const (
	featuresRelease = "switchyard-features"
	featuresDriver  = "features.e2e.switchyard.lab" // csiDriver.name in features-values.yaml
)

var featuresInstalled bool

// installFeaturesRelease installs the features release (once per suite
// run) with its node plugin on node, its controller on the host node, and
// waits until the driver has registered on node and its pods are Ready.
// The connection files must be in the Secret before: the pods read them
// at start.
func installFeaturesRelease(ctx context.Context, node string) {
	GinkgoHelper()
	if featuresInstalled {
		return
	}
	ns := f.Config.DriverNamespace
	main := helmCmd(ctx, "get", "values", f.Config.Release, "-n", ns, "-o", "yaml")
	mainValues := filepath.Join(GinkgoT().TempDir(), "main-values.yaml")
	Expect(os.WriteFile(mainValues, []byte(main), 0o600)).To(Succeed())
	args := []string{"upgrade", "--install", featuresRelease, filepath.Join(repoRoot(), "deploy", "charts", "switchyard"), "-n", ns,
		"-f", mainValues, "-f", filepath.Join(repoRoot(), "e2e", "deploy", "features-values.yaml"),
		"--set", "node.nodeSelector.kubernetes\\.io/hostname=" + node, "--wait", "--timeout", "10m"}
	if h := env.Lab.HostNode; h != "" {
		args = append(args, "--set", "controller.nodeSelector.kubernetes\\.io/hostname="+h)
	}
	start := time.Now()
	helmCmd(ctx, args...)
	featuresInstalled = true
	// helm --wait counts a pod ready once its containers started; on the
	// storage VM's emulated CPUs the driver serves its socket minutes
	// later (e2e/run.sh waits the same way for the main release).
	Expect(f.Wait(ctx, "the features driver to register on "+node, 10*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := f.Kube.StorageV1().CSINodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		var names []string
		for _, d := range n.Spec.Drivers {
			names = append(names, d.Name)
			if d.Name == featuresDriver {
				return true, "", nil
			}
		}
		return false, "registered: " + strings.Join(names, ", "), nil
	})).To(Succeed())
	GinkgoWriter.Printf("features release installed and registered on %s in %s\n", node, time.Since(start).Round(time.Second))
}

// uninstallFeaturesRelease removes the release (after every spec's own
// cleanup has deleted its volumes).
func uninstallFeaturesRelease(ctx context.Context) {
	if !featuresInstalled {
		return
	}
	helmCmd(ctx, "uninstall", featuresRelease, "-n", f.Config.DriverNamespace, "--wait", "--timeout", "5m")
	featuresInstalled = false
}
