package suites

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Bad input that only a cluster shows; the rest of issue 12's list is in
// e2e/badinput (the driver binary's own checks) and in the topology
// suite (a key without the prefix).
var _ = Describe("bad input", Label("badinput", "local-hostpath", "host"), func() {
	It("a StorageClass naming an unknown connection leaves the PVC Pending with the message, and nothing is made", func(ctx SpecContext) {
		conn := "e2e-no-such-connection"
		ns := f.Namespace(ctx, "unknown-conn")
		claimOn(ctx, ns, "data", conn)
		msg, err := f.WaitEvent(ctx, ns, "data", 3*time.Minute, "connection "+conn+": no file "+conn+".yaml in")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("event: %s\n", msg)
		expectStillPending(ctx, ns, "data")
		_, err = os.Stat(filepath.Join(f.Config.HostPathHostBase, conn))
		Expect(os.IsNotExist(err)).To(BeTrue(), "no folder was made for the unknown connection: %v", err)
	}, NodeTimeout(6*time.Minute))
})
