package csi

import (
	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// lockKeys returns the keys a request must hold: the volume id, volume name,
// snapshot id or snapshot name it acts on, and the source of a clone or
// restore (so a source cannot be deleted while it is being copied).
// Read-only calls that name no object (Probe, List*, GetCapacity) hold none,
// and neither do the controller's reads of one volume
// (ValidateVolumeCapabilities, ControllerGetVolume): they change nothing, a
// read racing a delete answers either "found" or NOT_FOUND (both true at
// some instant), and sidecars poll them from many goroutines at once, which
// an exclusive per-volume lock would serialise for no safety.
func lockKeys(req any) []string {
	var keys []string
	add := func(kind, v string) {
		if v != "" {
			keys = append(keys, kind+v)
		}
	}
	switch r := req.(type) {
	case *csipb.ValidateVolumeCapabilitiesRequest, *csipb.ControllerGetVolumeRequest:
		return nil
	case *csipb.CreateVolumeRequest:
		add("volname:", r.GetName())
		if src := r.GetVolumeContentSource(); src != nil {
			add("snap:", src.GetSnapshot().GetSnapshotId())
			add("vol:", src.GetVolume().GetVolumeId())
		}
	case *csipb.CreateSnapshotRequest:
		add("snapname:", r.GetName())
		add("vol:", r.GetSourceVolumeId())
	case *csipb.DeleteSnapshotRequest:
		add("snap:", r.GetSnapshotId())
	case *csipb.CreateVolumeGroupSnapshotRequest:
		// The group's name, and every member: a member volume is not
		// deleted or expanded while its snapshot is taken.
		add("groupname:", r.GetName())
		for _, v := range r.GetSourceVolumeIds() {
			add("vol:", v)
		}
	case *csipb.DeleteVolumeGroupSnapshotRequest:
		add("group:", r.GetGroupSnapshotId())
	case *csipb.GetVolumeGroupSnapshotRequest:
		add("group:", r.GetGroupSnapshotId())
	case interface{ GetVolumeId() string }:
		// DeleteVolume, Expand, Validate, Publish, Node* ...
		add("vol:", r.GetVolumeId())
	}
	return keys
}
