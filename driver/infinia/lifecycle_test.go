package infinia_test

import (
	"context"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
)

// TestLifecycle: create (twice: idempotent) → publish to the node's NQN →
// expand → list → capacity → unpublish → delete (twice), with the
// simulator's own view checked after each step: the subsystem's hosts,
// the volume's size, and nothing left at the end. Standalone with
// switchyard's file, with DDN's file, and behind the proxy.
func TestLifecycle(t *testing.T) {
	for _, m := range []mode{direct, ddnFile, proxied} {
		t.Run(m.name, func(t *testing.T) {
			r := newRig(t, m, infiniahost.Options{}, nil)
			ctx := context.Background()
			req := r.createReq("pvc-1", 1<<30, nil)
			vol, err := r.ctl.CreateVolume(ctx, req)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			id := vol.GetVolume().GetVolumeId()
			if want := r.id(r.h.Account + ":" + r.h.Service + "/pvc-1"); id != want {
				t.Fatalf("volume id %q, want %q", id, want)
			}
			again, err := r.ctl.CreateVolume(ctx, req)
			if err != nil || again.GetVolume().GetVolumeId() != id {
				t.Fatalf("create again: %v %v", again, err)
			}
			ss := r.rest.getSubsystem("pvc-1")
			if ss == nil || len(ss.Namespaces) != 1 || ss.Namespaces[0].Volume != "pvc-1" || len(ss.Hosts) != 0 {
				t.Fatalf("subsystem after create: %+v", ss)
			}
			vc := vol.GetVolume().GetVolumeContext()
			v := r.rest.getVolume("pvc-1")
			if vc["nqn"] != ss.NQN || vc["uuid"] != v.UUID || vc["nsid"] != "1" || vc["node_attach_driver"] != "nvmeof" ||
				vc["transports"] != "tcp://127.0.0.1:4420,tcp://127.0.0.2:4420,tcp://127.0.0.3:4420" {
				t.Errorf("volume_context %v (subsystem %+v, volume %+v)", vc, ss, v)
			}

			pub := &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: blockCap}
			for i := range 2 { // the second publish is idempotent
				pr, err := r.ctl.ControllerPublishVolume(ctx, pub)
				if err != nil {
					t.Fatalf("publish %d: %v", i, err)
				}
				if pc := pr.GetPublishContext(); pc["nqn"] != ss.NQN || pc["uuid"] != v.UUID {
					t.Errorf("publish_context %v", pc)
				}
			}
			if got := r.rest.getSubsystem("pvc-1").Hosts; !slices.Equal(got, []string{hostNQN}) {
				t.Fatalf("hosts after publish %v, want [%s]", got, hostNQN)
			}

			ex, err := r.ctl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id,
				CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}, VolumeCapability: blockCap})
			if err != nil || ex.GetCapacityBytes() != 2<<30 || ex.GetNodeExpansionRequired() {
				t.Fatalf("expand: %v %v", ex, err)
			}
			if v := r.rest.getVolume("pvc-1"); v.NBlocks*v.BlockSize != 2<<30 {
				t.Errorf("volume after expand: %+v", v)
			}

			lv, err := r.ctl.ListVolumes(ctx, &csi.ListVolumesRequest{})
			if err != nil || len(lv.GetEntries()) != 1 || lv.GetEntries()[0].GetVolume().GetVolumeId() != id ||
				lv.GetEntries()[0].GetVolume().GetCapacityBytes() != 2<<30 {
				t.Fatalf("list: %v %v", lv, err)
			}
			// The subtenant's 100 GiB quota is the limit; the volume uses 2.
			capReq := &csi.GetCapacityRequest{Parameters: r.params(nil), VolumeCapabilities: []*csi.VolumeCapability{blockCap}}
			if c, err := r.ctl.GetCapacity(ctx, capReq); err != nil || c.GetAvailableCapacity() != 98<<30 {
				t.Fatalf("capacity: %v %v, want %d", c, err, int64(98<<30))
			}

			if _, err := r.ctl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: nodeID}); err != nil {
				t.Fatalf("unpublish: %v", err)
			}
			if got := r.rest.getSubsystem("pvc-1").Hosts; len(got) != 0 {
				t.Fatalf("hosts after unpublish %v", got)
			}
			for i := range 2 {
				if _, err := r.ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Fatalf("delete %d: %v", i, err)
				}
			}
			r.rest.empty()
		})
	}
}

// TestStaticVolume: a PersistentVolume with a DDN handle of a volume an
// administrator made and exported on Infinia (its subsystem named
// otherwise) publishes, expands and deletes; the subsystem is not the
// driver's, so it stays, empty.
func TestStaticVolume(t *testing.T) {
	for _, m := range []mode{direct, proxied} {
		t.Run(m.name, func(t *testing.T) {
			r := newRig(t, m, infiniahost.Options{}, nil)
			ctx := context.Background()
			id := r.id(r.rest.staticVolume("vol1", "legacy-ss", 1<<30))
			pr, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: blockCap})
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			ss := r.rest.getSubsystem("legacy-ss")
			if !slices.Equal(ss.Hosts, []string{hostNQN}) {
				t.Fatalf("hosts of legacy-ss after publish: %v", ss.Hosts)
			}
			// No volumeAttributes on a static PV: publish_context alone must
			// let the node connect.
			pc := pr.GetPublishContext()
			if pc["nqn"] != ss.NQN || pc["transport"] != "tcp://127.0.0.1:4420" || pc["uuid"] != r.rest.getVolume("vol1").UUID {
				t.Errorf("publish_context %v", pc)
			}
			if _, err := r.ctl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id,
				CapacityRange: &csi.CapacityRange{RequiredBytes: 3 << 30}}); err != nil {
				t.Fatalf("expand: %v", err)
			}
			if v := r.rest.getVolume("vol1"); v.NBlocks*v.BlockSize != 3<<30 {
				t.Errorf("after expand: %+v", v)
			}
			if _, err := r.ctl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: nodeID}); err != nil {
				t.Fatalf("unpublish: %v", err)
			}
			if _, err := r.ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if v := r.rest.volumes(); len(v) != 0 {
				t.Errorf("volumes left: %v", v)
			}
			ss = r.rest.getSubsystem("legacy-ss")
			if ss == nil || len(ss.Namespaces) != 0 || len(ss.Hosts) != 0 {
				t.Errorf("legacy-ss after delete: %+v (want it kept, empty)", ss)
			}
		})
	}
}

// TestOwnershipTravels: owneruid/groupuid/perms of the account, with
// perms replaced by the parameter, reach volume_context and, through the
// volume's xattrs, the publish_context of a later ControllerPublishVolume.
func TestOwnershipTravels(t *testing.T) {
	for _, m := range []mode{direct, proxied} {
		t.Run(m.name, func(t *testing.T) {
			h := startHost(t, infiniahost.Options{})
			c, err := serve(t, m, driverConfig(h, m, account(h, map[string]any{"owneruid": "1000", "groupuid": "2000", "perms": "0750"})))
			if err != nil {
				t.Fatal(err)
			}
			r := &rig{t: t, m: m, h: h, ctl: c.Controller, rest: newREST(t, h)}
			ctx := context.Background()
			vol, err := r.ctl.CreateVolume(ctx, r.createReq("pvc-own", 1<<30, map[string]string{"perms": "2775"}))
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			want := map[string]string{"owneruid": "1000", "groupuid": "2000", "perms": "2775"}
			check := func(what string, got map[string]string) {
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s[%s] = %q, want %q", what, k, got[k], v)
					}
				}
			}
			check("volume_context", vol.GetVolume().GetVolumeContext())
			pr, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
				VolumeId: vol.GetVolume().GetVolumeId(), NodeId: nodeID, VolumeCapability: blockCap})
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			check("publish_context", pr.GetPublishContext())
		})
	}
}
