package node

import (
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// checkCapability rejects a missing or incomplete volume_capability.
func checkCapability(id string, c *csi.VolumeCapability) error {
	if c == nil {
		return status.Errorf(codes.InvalidArgument, "volume %s: volume_capability is required", id)
	}
	if m := c.GetAccessMode().GetMode(); m == csi.VolumeCapability_AccessMode_UNKNOWN {
		return status.Errorf(codes.InvalidArgument, "volume %s: volume_capability.access_mode is missing or UNKNOWN", id)
	}
	if c.GetBlock() == nil && c.GetMount() == nil {
		return status.Errorf(codes.InvalidArgument, "volume %s: volume_capability needs access_type mount or block", id)
	}
	return nil
}

// readerOnly modes are published read-only even when readonly is false.
func readerOnly(m csi.VolumeCapability_AccessMode_Mode) bool {
	return m == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY ||
		m == csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
}

// exclusive modes allow one target path per node (the CSI spec's second
// NodePublishVolume table, which applies because the plugin advertises
// SINGLE_NODE_MULTI_WRITER). SINGLE_NODE_WRITER is deliberately not
// exclusive: Kubernetes sends it for ReadWriteOnce, which lets several
// pods on one node share the volume.
func exclusive(m csi.VolumeCapability_AccessMode_Mode) bool {
	return m == csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER ||
		m == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
}

// describe renders a capability for error messages.
func describe(c *csi.VolumeCapability) string {
	if c == nil {
		return "no capability"
	}
	mode := c.GetAccessMode().GetMode().String()
	if c.GetBlock() != nil {
		return "block " + mode
	}
	fs := c.GetMount().GetFsType()
	if fs == "" {
		return fmt.Sprintf("mount %s flags=%v", mode, c.GetMount().GetMountFlags())
	}
	return fmt.Sprintf("mount %s fs=%s flags=%v", mode, fs, c.GetMount().GetMountFlags())
}

func accessType(block bool) string {
	if block {
		return "block"
	}
	return "mount"
}
