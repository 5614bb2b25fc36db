package zfsgeneric_test

import (
	"context"
	"strings"
	"testing"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/proxy"
	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// volumeCondition decodes CSI 1.12's VolumeStatus.volume_condition from a
// status's unknown bytes, as external-health-monitor v0.18.0 reads it.
func volumeCondition(t *testing.T, unknown []byte) (found, abnormal bool, msg string) {
	t.Helper()
	c, err := proxy.ReadLegacyCondition(unknown)
	if err != nil {
		t.Fatal(err)
	}
	return c.Found, c.Abnormal, c.Message
}

// What the health monitor sees: ListVolumes through the driver's CSI 1.12
// bridge (--legacy-volume-condition) carries an abnormal VOLUME_CONDITION
// naming the removed iSCSI target or NVMe-oF subsystem, a normal one for
// the others, and the whole list costs one listing of the host's targets
// plus the one that confirms the removal.
func TestBlockShareVolumeConditionInListVolumes(t *testing.T) {
	for _, c := range []struct{ driver, remove, name string }{
		{zfsgeneric.DriverISCSI, "targetcli /iscsi delete " + labIQNBase + ":pvc-b", labIQNBase + ":pvc-b"},
		{zfsgeneric.DriverNVMeoF, "nvmetcli /ports/1/subsystems delete " + labNQNBase + ":pvc-b && nvmetcli /subsystems delete " + labNQNBase + ":pvc-b", labNQNBase + ":pvc-b"},
	} {
		t.Run(c.driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, c.driver, ""))
			for _, n := range []string{"pvc-a", "pvc-b", "pvc-c"} {
				newVolume(t, d, n)
			}
			hostRun(t, h, c.remove)
			before := h.Server.Stats()

			resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := proxy.LegacyVolumeCondition(d)(ctx, &csi.ListVolumesRequest{}, &grpc.UnaryServerInfo{},
				func(context.Context, any) (any, error) { return resp, nil })
			if err != nil {
				t.Fatal(err)
			}
			wire, err := proto.Marshal(out.(*csi.ListVolumesResponse))
			if err != nil {
				t.Fatal(err)
			}
			var got csi.ListVolumesResponse
			if err := proto.Unmarshal(wire, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.GetEntries()) != 3 {
				t.Fatalf("listed %v", got.GetEntries())
			}
			for _, e := range got.GetEntries() {
				id := e.GetVolume().GetVolumeId()
				found, abnormal, msg := volumeCondition(t, e.GetStatus().ProtoReflect().GetUnknown())
				switch {
				case !found:
					t.Errorf("%s: no volume condition", id)
				case id == "pvc-b" && (!abnormal || !strings.Contains(msg, "INACCESSIBLE/ShareMissing") || !strings.Contains(msg, c.name) || !strings.Contains(msg, "is gone")):
					t.Errorf("%s: abnormal=%v %q; want abnormal, ShareMissing naming %s", id, abnormal, msg, c.name)
				case id != "pvc-b" && (abnormal || msg != ""):
					t.Errorf("%s: abnormal=%v %q; want normal", id, abnormal, msg)
				}
			}
			after := h.Server.Stats()
			if runs := after.TargetcliRuns + after.NvmetcliRuns - before.TargetcliRuns - before.NvmetcliRuns; runs != 2 {
				t.Errorf("the list with its conditions ran the target CLI %d times; want 2 (one listing, one confirming the removal)", runs)
			}
		})
	}
}
