package infinia

import (
	"fmt"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// zoneKey is the topology key an account's zone is reported under.
const zoneKey = "topology.kubernetes.io/zone"

// fsTypes a node may be asked to make on a volume.
var fsTypes = []string{"ext3", "ext4", "xfs", "btrfs"}

// checkCapability returns why c cannot be served, or "". A block device
// may be shared by many nodes only raw: a filesystem on it would be
// corrupted by a second writer (DDN: "ReadWriteMany cannot be run with
// volumeMode: Filesystem").
func checkCapability(c *csi.VolumeCapability) string {
	if c == nil {
		return "a volume capability is empty"
	}
	mode := c.GetAccessMode().GetMode()
	if c.GetAccessMode() == nil || mode == csi.VolumeCapability_AccessMode_UNKNOWN {
		return "a volume capability has no access mode"
	}
	switch {
	case c.GetBlock() != nil:
		return ""
	case c.GetMount() != nil:
		if fs := c.GetMount().GetFsType(); fs != "" && !slices.Contains(fsTypes, fs) {
			return fmt.Sprintf("fs_type %q is not supported (use one of %s, or leave it empty for ext4)", fs, strings.Join(fsTypes, ", "))
		}
		switch mode {
		case csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
			csi.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
			csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER:
			return fmt.Sprintf("access mode %s needs volumeMode: Block: a filesystem on an Infinia volume may be mounted by one node only", mode)
		}
		return ""
	}
	return "a volume capability has no access type (mount or block)"
}

func checkCapabilities(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "volume_capabilities is required"
	}
	for _, c := range caps {
		if why := checkCapability(c); why != "" {
			return why
		}
	}
	return ""
}

// topology is where an account's volumes are reachable: its zone, or
// anywhere (nil) when it has none.
func topology(a *account) []*csi.Topology {
	if a.zone == "" {
		return nil
	}
	return []*csi.Topology{{Segments: map[string]string{zoneKey: a.zone}}}
}

// checkRequisite fails when the requisite names zones and the account's
// is not among them. Terms without the zone key do not constrain it.
func checkRequisite(a *account, req *csi.TopologyRequirement) error {
	if a.zone == "" {
		return nil
	}
	var zones []string
	for _, t := range req.GetRequisite() {
		z, ok := t.GetSegments()[zoneKey]
		if !ok {
			continue
		}
		if z == a.zone {
			return nil
		}
		zones = append(zones, fmt.Sprintf("%q", z))
	}
	if len(zones) == 0 {
		return nil
	}
	return status.Errorf(codes.InvalidArgument,
		"account %s serves zone %q (accounts.%s.zone), but the requisite topology allows only %s %s: use an account of one of those zones",
		a.key, a.zone, a.key, zoneKey, strings.Join(zones, ", "))
}
