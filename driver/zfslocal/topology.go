package zfslocal

import (
	"context"
	"fmt"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// Driver is the engine plus node-local topology: every volume is
// accessible from this controller's node only, and requests for other
// nodes are refused before anything is made.
type Driver struct {
	*engine.Engine
	name, node, topoKey string
}

func errNoNodeName(name string) error {
	return fmt.Errorf("%s: the node name (CSI_NODE_ID) is required: volumes live in this node's pool and carry its name as topology", name)
}

func (d *Driver) topology() []*csi.Topology {
	return []*csi.Topology{{Segments: map[string]string{d.topoKey: d.node}}}
}

func (d *Driver) withTopology(v *csi.Volume) {
	if v != nil {
		v.AccessibleTopology = d.topology()
	}
}

// checkRequisite refuses a requisite topology that names nodes (under the
// node key) none of which is this one. Terms without the key do not
// constrain the node.
func (d *Driver) checkRequisite(req *csi.TopologyRequirement) error {
	var others []string
	for _, t := range req.GetRequisite() {
		n, ok := t.GetSegments()[d.topoKey]
		if !ok || n == d.node {
			return nil
		}
		others = append(others, fmt.Sprintf("%q", n))
	}
	if len(others) == 0 {
		return nil
	}
	return status.Errorf(codes.ResourceExhausted, "%s can only make volumes on node %q (where this controller runs and its pool is), but the requisite topology allows only %s %s",
		d.name, d.node, d.topoKey, strings.Join(others, ", "))
}

// CreateVolume makes the volume in this node's pool.
func (d *Driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if err := d.checkRequisite(req.GetAccessibilityRequirements()); err != nil {
		return nil, err
	}
	resp, err := d.Engine.CreateVolume(ctx, req)
	if err != nil {
		return nil, d.poolErr(err)
	}
	d.withTopology(resp.GetVolume())
	return resp, nil
}

// ControllerGetVolume describes one volume, with its node.
func (d *Driver) ControllerGetVolume(ctx context.Context, req *csi.ControllerGetVolumeRequest) (*csi.ControllerGetVolumeResponse, error) {
	resp, err := d.Engine.ControllerGetVolume(ctx, req)
	if err != nil {
		return nil, err
	}
	d.withTopology(resp.GetVolume())
	return resp, nil
}

// ListVolumes lists this node's volumes, with their node.
func (d *Driver) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	resp, err := d.Engine.ListVolumes(ctx, req)
	if err != nil {
		return nil, d.poolErr(err)
	}
	for _, e := range resp.GetEntries() {
		d.withTopology(e.GetVolume())
	}
	return resp, nil
}

// GetCapacity is the pool's free space for this node, 0 for any other.
func (d *Driver) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if n, ok := req.GetAccessibleTopology().GetSegments()[d.topoKey]; ok && n != d.node {
		return &csi.GetCapacityResponse{AvailableCapacity: 0}, nil
	}
	resp, err := d.Engine.GetCapacity(ctx, req)
	if err != nil {
		return nil, d.poolErr(err)
	}
	return resp, nil
}

// poolErr turns zfs's "no such pool" into FAILED_PRECONDITION naming the
// node: with zfs-local it means this node lacks the pool (a node the
// controller DaemonSet should not run on, or a pool not imported yet).
func (d *Driver) poolErr(err error) error {
	msg := status.Convert(err).Message()
	if !strings.Contains(msg, "no such pool") {
		return err
	}
	return status.Errorf(codes.FailedPrecondition, "%s: node %q does not have the pool of zfs.datasetParentName (import it, or keep this driver off the node): %s", d.name, d.node, msg)
}
