package truenas

// freenas-nvmeof (truenas-nvmeof) is democratic-csi next's NVMe-oF driver
// of the SSH family: zvols through zfs over SSH, the subsystem, namespace
// and port links through the middleware's nvmet API (TrueNAS 25.10 and
// later), with the keys, user properties and volume_context of
// freenas-api-nvmeof. Only the transport of the datasets differs, which is
// what kind.ssh selects; the nvmet sharer refuses older releases, naming
// both versions.
//
// The kind joins the list from here, so that driver.go stays as it is: a
// package variable is initialised before any init function runs, so
// driver.go's init registers it with the others.
var _ = addKind(kind{"freenas-nvmeof", "truenas-nvmeof", "nvmeof", true})

func addKind(k kind) bool {
	kinds = append(kinds, k)
	return true
}
