package proxy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	_ "github.com/switchyard-csi/switchyard/driver/localhostpath"
	_ "github.com/switchyard-csi/switchyard/driver/shareclient"
)

func (r *rig) publish(handle, node string) error {
	_, err := r.ctl.ControllerPublishVolume(context.Background(), &csipb.ControllerPublishVolumeRequest{
		VolumeId: handle, NodeId: node, VolumeCapability: mountCap[0]})
	return err
}

// controller.strategy node: one node's csi-attacher publishes every
// volume of the cluster. For a backend with nothing to attach, a
// controller that cannot check the volume (the share is not mounted on
// its node; a node-local volume of another node) publishes to another
// node without the check; where it can check (its own node, or a share it
// has mounted), a missing volume stays NOT_FOUND and an unmounted share
// FAILED_PRECONDITION. The rig's controller runs on node-1.
func TestPublishWithNothingToAttach(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.Topology.Type = TopologyNode })
	share := filepath.Join(r.dir, "share")
	must(t, os.Mkdir(share, 0o755))
	r.write("nfs", "driver: nfs-client\nnfs:\n  shareHost: 10.0.0.5\n  shareBasePath: /export/k8s\n  controllerBasePath: "+share+"\n  checkControllerMount: false\n")
	hp := filepath.Join(r.dir, "hostpath")
	r.write("hp", "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+hp+"\n  controllerBasePath: "+hp+"\n")
	for _, conn := range []string{"nfs", "hp"} {
		if _, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-1", map[string]string{ConnectionParameter: conn}, nil)); err != nil {
			t.Fatalf("%s: %v", conn, err)
		}
	}

	// Where the volume can be checked, publishing checks it.
	for _, node := range []string{"n=node-1", "n=node-2"} {
		if err := r.publish("v:nfs/pvc-1", node); err != nil {
			t.Errorf("nfs-client volume to %s: %v", node, err)
		}
		wantCode(t, "a missing nfs-client volume to "+node, r.publish("v:nfs/pvc-gone", node), codes.NotFound, "pvc-gone")
	}
	if err := r.publish("v:hp/pvc-1", "n=node-1"); err != nil {
		t.Errorf("local-hostpath volume to its own node: %v", err)
	}
	wantCode(t, "a missing local-hostpath volume to this node", r.publish("v:hp/pvc-gone", "n=node-1"), codes.NotFound, "pvc-gone")

	// A local-hostpath volume of node-2 is not on node-1's disk: node-1's
	// attacher publishes it to node-2 without the check...
	if err := r.publish("v:hp/pvc-of-node-2", "n=node-2"); err != nil {
		t.Errorf("a node-local volume of another node: %v", err)
	}
	// ...but an attacher whose node cannot be told apart from the target
	// (no node name in the id) keeps the answer.
	wantCode(t, "a node id without a node name", r.publish("v:hp/pvc-of-node-2", "h=host-2"), codes.NotFound)

	// The share is not mounted on this controller's node (its mount point
	// is gone): publishing to another node, which mounts the share from
	// the server itself, succeeds; to this node the precondition stands.
	must(t, os.Rename(share, share+".unmounted"))
	if err := r.publish("v:nfs/pvc-1", "n=node-2"); err != nil {
		t.Errorf("an nfs-client volume to another node, share not mounted here: %v", err)
	}
	wantCode(t, "share not mounted, publish to this node", r.publish("v:nfs/pvc-1", "n=node-1"), codes.FailedPrecondition, "not mounted on the controller", "10.0.0.5:/export/k8s")
	wantCode(t, "share not mounted, unreadable node id", r.publish("v:nfs/pvc-1", "node-2"), codes.FailedPrecondition)
	// A connection whose file is gone is the proxy's own
	// FAILED_PRECONDITION, for every node: the volume may still exist.
	wantCode(t, "no such connection", r.publish("v:gone/pvc-1", "n=node-2"), codes.FailedPrecondition, "gone")
}

// Without CSI_NODE_ID the controller does not know its node: every
// answer stands.
func TestPublishWithoutOwnNodeName(t *testing.T) {
	r := newRig(t)
	r.conns.opts.NodeName = ""
	share := filepath.Join(r.dir, "missing")
	r.write("nfs", "driver: nfs-client\nnfs:\n  shareHost: 10.0.0.5\n  shareBasePath: /export/k8s\n  controllerBasePath: "+share+"\n  checkControllerMount: false\n")
	wantCode(t, "share not mounted, own node unknown", r.publish("v:nfs/pvc-1", "n=node-2"), codes.FailedPrecondition, "not mounted on the controller")
}
