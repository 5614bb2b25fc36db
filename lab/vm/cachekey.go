package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// BuilderVersion changes whenever the build steps change in a way that
// the other inputs of the cache key do not show.
const BuilderVersion = "2"

// Suite is the Debian release of the root filesystem.
const Suite = "bookworm"

// Packages are installed into the root filesystem: the targets (nvmet and
// LIO need only modules and configfs; nfs-kernel-server, samba), the
// initiators and the node tools the driver's attachers call (nvme-cli,
// open-iscsi, nfs-common, cifs-utils, mount/blkid/findmnt from util-linux
// and mount, mkfs and resize tools), and udev for /dev/disk links.
var Packages = []string{
	"kmod", "nvme-cli", "e2fsprogs", "xfsprogs", "btrfs-progs", "open-iscsi",
	"nfs-kernel-server", "nfs-common", "iproute2", "procps", "util-linux", "mount",
	"udev", "samba", "cifs-utils", "smbclient",
}

// NodePackages make the image a Kubernetes node as well (lab/cluster's VM
// node): ImageOptions{ExtraPackages: NodePackages}. It is an image of its
// own key, so the storage image without them stays cached as it is. The
// kubelet itself comes through the share: a new Kubernetes release must
// not rebuild the image. iptables and conntrack: the kubelet and the
// bridge CNI plugin call them; socat: kubectl port-forward.
var NodePackages = []string{"containerd", "runc", "containernetworking-plugins", "iptables", "conntrack", "socat"}

// keyInputs is everything the image is made of.
type keyInputs struct {
	Kernel    string   // kernel version
	Packages  []string // Packages plus the caller's extras
	InitFiles []string // the init scripts' contents
	Builder   string
	Prune     []string
	BootRoots []string
	SizeBytes int64
}

// cacheKey hashes the inputs: any change gives another image directory.
// The package order does not matter.
func cacheKey(in keyInputs) string {
	h := sha256.New()
	pk := append([]string(nil), in.Packages...)
	sort.Strings(pk)
	fmt.Fprintf(h, "builder=%s\nsuite=%s\nkernel=%s\nsize=%d\n", in.Builder, Suite, in.Kernel, in.SizeBytes)
	fmt.Fprintf(h, "packages=%s\nprune=%s\nboot=%s\n",
		strings.Join(pk, ","), strings.Join(in.Prune, ","), strings.Join(in.BootRoots, ","))
	for _, f := range in.InitFiles {
		fmt.Fprintf(h, "file %d\n%s\n", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}
