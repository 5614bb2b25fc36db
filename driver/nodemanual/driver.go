// Package nodemanual is the node-manual backend: static PersistentVolumes
// whose volumeAttributes carry the node attach keys (node_attach_driver
// nfs, smb, lustre, iscsi, nvmeof, hostpath or zfs-local and that kind's
// keys). There is nothing to provision: the controller answers
// UNIMPLEMENTED to every call that would make or remove storage, as
// democratic-csi's node-manual does, and the node service stages the
// volume with the attacher node_attach_driver names, as it does for every
// backend (driver/node).
//
// What the controller does do is ValidateVolumeCapabilities, against the
// attach kind in the volume_context: a typo in a hand-written PV is then
// reported with the attribute it concerns.
package nodemanual

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// DriverName is democratic-csi's driver type.
const DriverName = "node-manual"

func init() {
	backend.Register(backend.Type{
		Name:      DriverName,
		ConfigKey: "driver",
		// Static PVs: the handle is whatever the PV says; no ids are made.
		Validate: func(config.Tree) []config.Problem { return nil },
		NodeOnly: true,
		New:      backend.Constructor(New),
	})
}

// Driver is the node-manual controller: it provisions nothing.
type Driver struct {
	csi.UnimplementedControllerServer
}

var _ backend.Driver = (*Driver)(nil)

// New builds the driver; node-manual has no keys of its own.
func New(backend.Options) (*Driver, error) { return &Driver{}, nil }

// Close releases nothing.
func (*Driver) Close() error { return nil }

// unimplemented is the answer to every provisioning call.
func unimplemented(call string) error {
	return status.Errorf(codes.Unimplemented, "%s: node-manual serves static PersistentVolumes only: create the PV by hand with csi.volumeAttributes carrying node_attach_driver and its keys (docs/backends/node-manual.md)", call)
}

// ControllerGetCapabilities advertises no controller RPC, as democratic-csi.
func (*Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return backend.Capabilities(), nil
}

// CreateVolume is UNIMPLEMENTED: volumes are static PVs.
func (*Driver) CreateVolume(context.Context, *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	return nil, unimplemented("CreateVolume")
}

// DeleteVolume is UNIMPLEMENTED: node-manual never removes storage.
func (*Driver) DeleteVolume(context.Context, *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	return nil, unimplemented("DeleteVolume")
}

// ValidateVolumeCapabilities checks the capabilities against the attach
// kind the volume_context names (democratic-csi's assertCapabilities).
func (*Driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "ValidateVolumeCapabilities: volume_id is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "ValidateVolumeCapabilities: volume_capabilities is required")
	}
	vc, err := volumecontext.Decode(req.GetVolumeContext())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "ValidateVolumeCapabilities %q: the PV's volumeAttributes: %v", req.GetVolumeId(), err)
	}
	for _, c := range req.GetVolumeCapabilities() {
		if msg := CheckCapability(vc.Attach.AttachDriver(), c); msg != "" {
			return &csi.ValidateVolumeCapabilitiesResponse{Message: msg}, nil
		}
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

// Access modes by resource type (democratic-csi's node-manual lists).
var (
	singleNode = []csi.VolumeCapability_AccessMode_Mode{
		csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
	}
	multiReadSingleWrite = []csi.VolumeCapability_AccessMode_Mode{
		csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
		csi.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
	}
	blockFSTypes = []string{"btrfs", "ext3", "ext4", "ext4dev", "xfs"}
)

// CheckCapability says why the attach kind named kind cannot serve c, or "".
// File systems (nfs, smb, lustre, hostpath) serve mount access in every
// mode; block devices (iscsi, nvmeof) serve mount with a block file system
// or raw block, multi-node writers only as raw block; zfs-local serves one
// node only.
func CheckCapability(kind string, c *csi.VolumeCapability) string {
	if c == nil || c.GetAccessMode() == nil {
		return "a volume capability has no access_mode"
	}
	mode := c.GetAccessMode().GetMode()
	var fsTypes []string
	modes := append(append([]csi.VolumeCapability_AccessMode_Mode{}, singleNode...), multiReadSingleWrite...)
	filesystem := false
	switch kind {
	case volumecontext.DriverNFS:
		fsTypes, filesystem = []string{"nfs"}, true
	case volumecontext.DriverSMB:
		fsTypes, filesystem = []string{"cifs"}, true
	case volumecontext.DriverLustre:
		fsTypes, filesystem = []string{"lustre"}, true
	case volumecontext.DriverHostPath:
		filesystem = true
	case volumecontext.DriverISCSI, volumecontext.DriverNVMeoF:
		fsTypes = blockFSTypes
	case volumecontext.DriverZFSLocal:
		fsTypes = append(slices.Clone(blockFSTypes), "zfs")
		modes = slices.Clone(singleNode)
	default:
		return fmt.Sprintf("node_attach_driver %q is not one node-manual serves", kind)
	}
	if filesystem {
		modes = append(modes, csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
		if c.GetMount() == nil {
			return fmt.Sprintf("node_attach_driver %s is a file system: only mount access is served", kind)
		}
	} else if c.GetBlock() != nil {
		modes = append(modes, csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	}
	if m := c.GetMount(); m != nil && m.GetFsType() != "" && !slices.Contains(fsTypes, m.GetFsType()) {
		return fmt.Sprintf("fs_type %q does not suit node_attach_driver %s (use %s)", m.GetFsType(), kind, orEmpty(fsTypes))
	}
	if !slices.Contains(modes, mode) {
		return fmt.Sprintf("access mode %s is not served by node_attach_driver %s", mode, kind)
	}
	return ""
}

func orEmpty(fsTypes []string) string {
	if len(fsTypes) == 0 {
		return "no fs_type"
	}
	return strings.Join(fsTypes, ", ") + " or no fs_type"
}
