package suites

// The share clients' release (e2e/deploy/clients-values.yaml): a second
// install of the chart whose only node plugin, and so its only controller
// with every controller sidecar, runs on the storage VM's node, where the
// shares of the nfs-client and smb-client rows are mounted. Installed by
// the first spec of such a row, removed after the suite.

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	"github.com/switchyard-csi/switchyard/e2e/backends"
)

var clientsRel = &extraRelease{name: "switchyard-clients", driver: "clients.e2e.switchyard.lab", values: "clients-values.yaml"}

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
		return clientsRel.driver, clientsRel.name
	}
	Fail("unknown release " + fam.Release + " of row " + fam.Name)
	return "", ""
}

// installClientsRelease installs the release on the storage VM's node.
func installClientsRelease(ctx context.Context) {
	GinkgoHelper()
	node := env.Lab.VMNode
	if node == "" {
		skipOrFail("the share clients' release runs on the storage VM's node, and E2E_LAB_FILE names none")
	}
	clientsRel.install(ctx, node)
}
