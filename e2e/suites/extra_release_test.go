package suites

// A second install of the chart beside the main release (the features and
// the share clients' releases): installed by the first spec that needs it,
// over the main release's own values (the lab's images) and a values file
// of e2e/deploy, and removed after its last spec.

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

// extraRelease is one such install.
type extraRelease struct {
	name      string // the Helm release
	driver    string // csiDriver.name in its values file
	values    string // its values file, in e2e/deploy
	installed bool
}

// install installs the release (once per suite run) with its node plugin
// on node and any further --set values, then waits until its driver has
// registered on node. The connection files must be in the Secret before:
// the pods read them at start.
func (r *extraRelease) install(ctx context.Context, node string, sets ...string) {
	GinkgoHelper()
	if r.installed {
		return
	}
	ns := f.Config.DriverNamespace
	main := helmCmd(ctx, "get", "values", f.Config.Release, "-n", ns, "-o", "yaml")
	mainValues := filepath.Join(GinkgoT().TempDir(), "main-values.yaml")
	Expect(os.WriteFile(mainValues, []byte(main), 0o600)).To(Succeed())
	args := []string{"upgrade", "--install", r.name, filepath.Join(repoRoot(), "deploy", "charts", "switchyard"), "-n", ns,
		"-f", mainValues, "-f", filepath.Join(repoRoot(), "e2e", "deploy", r.values),
		"--set", "node.nodeSelector.kubernetes\\.io/hostname=" + node, "--wait", "--timeout", "10m"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	start := time.Now()
	helmCmd(ctx, args...)
	r.installed = true
	// helm --wait counts a pod ready once its containers started; on the
	// storage VM's emulated CPUs the driver serves its socket minutes
	// later (e2e/run.sh waits the same way for the main release).
	Expect(f.Wait(ctx, r.driver+" to register on "+node, 10*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := f.Kube.StorageV1().CSINodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		var names []string
		for _, d := range n.Spec.Drivers {
			names = append(names, d.Name)
			if d.Name == r.driver {
				return true, "", nil
			}
		}
		return false, "registered: " + strings.Join(names, ", "), nil
	})).To(Succeed())
	GinkgoWriter.Printf("release %s installed and registered on %s in %s\n", r.name, node, time.Since(start).Round(time.Second))
}

// uninstall removes the release (after every spec's own cleanup has
// deleted its volumes).
func (r *extraRelease) uninstall(ctx context.Context) {
	if !r.installed {
		return
	}
	helmCmd(ctx, "uninstall", r.name, "-n", f.Config.DriverNamespace, "--wait", "--timeout", "5m")
	r.installed = false
}
