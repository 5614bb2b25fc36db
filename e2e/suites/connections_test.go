package suites

import (
	"context"
	"time"

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
	_, release := releaseOf(ctx, fam)
	putAndWaitIn(ctx, release, conn, backends.ConnectionFile(env, fam, conn))
	return conn
}

// putAndWait writes a connection file into the main release's store and
// waits until the driver's pods see it (the kubelet refreshes a mounted
// Secret about a minute after it changes; a file already there returns
// at once). It returns how long the file took to arrive.
func putAndWait(ctx context.Context, conn, content string) time.Duration {
	GinkgoHelper()
	return putAndWaitIn(ctx, f.Config.Release, conn, content)
}

// putAndWaitIn is putAndWait for the pods of another release that mounts
// the main release's connections (the share clients').
func putAndWaitIn(ctx context.Context, release, conn, content string) time.Duration {
	GinkgoHelper()
	Expect(f.Conns.Put(ctx, conn, content)).To(Succeed())
	return f.WaitConnectionFile(ctx, release, conn, content, 4*time.Minute)
}
