package suites

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchyard-csi/switchyard/e2e/backends"
)

// connectionName is the data path's connection of a family. The same
// names are in the Secret `make e2e` installs (cmd/e2e-connections), so
// the driver has them from its start and no spec waits for the kubelet
// to refresh the Secret.
func connectionName(fam backends.Family) string { return "e2e-" + fam.Short }

// ensureConnection writes the family's connection into the main release's
// store (a no-op when `make e2e` installed the same file) and returns its
// name. The file stays for the next spec of the family.
func ensureConnection(ctx context.Context, fam backends.Family) string {
	GinkgoHelper()
	conn := connectionName(fam)
	Expect(f.Conns.Put(ctx, conn, backends.ConnectionFile(env, fam, conn))).To(Succeed())
	return conn
}
