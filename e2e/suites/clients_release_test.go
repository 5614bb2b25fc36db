package suites

// The share clients' release (e2e/deploy/clients-values.yaml): a second
// install of the chart whose only node plugin, and so its only controller
// with every controller sidecar, runs on the storage VM's node, where the
// shares of the nfs-client and smb-client rows are mounted. Installed by
// the first spec of such a row, removed after the suite.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

const (
	clientsRelease = "switchyard-clients"
	clientsDriver  = "clients.e2e.switchyard.lab" // csiDriver.name in clients-values.yaml
)

var clientsInstalled bool

// releaseOf is the CSI driver name and the Helm release a row's
// StorageClass and connection belong to, installing the release first
// when the row has one of its own.
func releaseOf(ctx context.Context, fam backends.Family) (driver, release string) {
	GinkgoHelper()
	switch fam.Release {
	case "":
		return f.Config.DriverName, f.Config.Release
	case backends.ClientsRelease:
		installClientsRelease(ctx)
		return clientsDriver, clientsRelease
	}
	Fail("unknown release " + fam.Release + " of row " + fam.Name)
	return "", ""
}

// installClientsRelease installs the release on the storage VM's node
// (once per suite run) and waits until its driver has registered there.
func installClientsRelease(ctx context.Context) {
	GinkgoHelper()
	if clientsInstalled {
		return
	}
	node := env.Lab.VMNode
	if node == "" {
		skipOrFail("the share clients' release runs on the storage VM's node, and E2E_LAB_FILE names none")
	}
	ns := f.Config.DriverNamespace
	main := helmCmd(ctx, "get", "values", f.Config.Release, "-n", ns, "-o", "yaml")
	mainValues := filepath.Join(GinkgoT().TempDir(), "main-values.yaml")
	Expect(os.WriteFile(mainValues, []byte(main), 0o600)).To(Succeed())
	start := time.Now()
	helmCmd(ctx, "upgrade", "--install", clientsRelease, filepath.Join(repoRoot(), "deploy", "charts", "switchyard"), "-n", ns,
		"-f", mainValues, "-f", filepath.Join(repoRoot(), "e2e", "deploy", "clients-values.yaml"),
		"--set", "node.nodeSelector.kubernetes\\.io/hostname="+node, "--wait", "--timeout", "10m")
	clientsInstalled = true
	// helm --wait counts a pod ready once its containers started; on the
	// storage VM's emulated CPUs the driver serves its socket later.
	Expect(f.Wait(ctx, "the share clients' driver to register on "+node, 10*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := f.Kube.StorageV1().CSINodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		var names []string
		for _, d := range n.Spec.Drivers {
			names = append(names, d.Name)
			if d.Name == clientsDriver {
				return true, "", nil
			}
		}
		return false, "registered: " + strings.Join(names, ", "), nil
	})).To(Succeed())
	GinkgoWriter.Printf("share clients' release installed and registered on %s in %s\n", node, time.Since(start).Round(time.Second))
}

// uninstallClientsRelease removes the release after the suite (every
// spec's own cleanup has deleted its volumes by then).
func uninstallClientsRelease(ctx context.Context) {
	if !clientsInstalled {
		return
	}
	helmCmd(ctx, "uninstall", clientsRelease, "-n", f.Config.DriverNamespace, "--wait", "--timeout", "5m")
	clientsInstalled = false
}
