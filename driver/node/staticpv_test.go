package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// A static PV (Infinia) carries the attach keys only in publish_context:
// the Service stages from there, records it, and unstages from the record.
func TestStaticPVAttachKeysFromPublishContext(t *testing.T) {
	const uuid = "6f1c3a52-2b7e-4c55-9d0e-1f5b3e2a9c10"
	f := newAttachFixture(t)
	nvmeTarget(f, true)
	r := f.stageCtx(map[string]string{"provisioner_driver": "infinia", "owneruid": "1000"}, blockCap(snw))
	r.PublishContext = map[string]string{
		volumecontext.KeyAttachDriver: "nvmeof", volumecontext.KeyNQN: testNQN, volumecontext.KeyTransports: "tcp://10.0.0.5:4420,tcp://10.0.0.7:4420", volumecontext.KeyUUID: uuid,
	}
	f.mustStage(t, r)
	if n := len(f.sim.lines("nvme connect")); n != 2 {
		t.Fatalf("%d connects, want one per transport", n)
	}
	rec, err := f.svc.store.load(volID)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if rec.Attacher != "nvmeof" || rec.ContextFrom != contextFromPublish || rec.Context[volumecontext.KeyNQN] != testNQN || rec.Context["owneruid"] != "1000" {
		t.Fatalf("record %+v", rec)
	}
	// The retry is recognised as the same request.
	f.mustStage(t, r)
	if err := f.unstage(volID, f.staging); err != nil {
		t.Fatal(err)
	}
	if got := f.sim.lines("nvme disconnect"); len(got) != 1 {
		t.Fatalf("unstage from the record did not disconnect: %q", f.sim.ran)
	}
}

func TestAttachContextPrecedence(t *testing.T) {
	tests := []struct {
		name     string
		vc, pc   map[string]string
		want     string // node_attach_driver used
		wantFrom string
	}{
		{"volume_context wins", map[string]string{volumecontext.KeyAttachDriver: "hostpath"}, map[string]string{volumecontext.KeyAttachDriver: "nfs"}, "hostpath", ""},
		{"publish_context fills in", map[string]string{"server": "a"}, map[string]string{volumecontext.KeyAttachDriver: "nfs", "server": "b"}, "nfs", contextFromPublish},
		{"neither", map[string]string{"server": "a"}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from := attachContext(tt.vc, tt.pc)
			if got[volumecontext.KeyAttachDriver] != tt.want || from != tt.wantFrom {
				t.Fatalf("attachContext = %v, %q", got, from)
			}
			if from != "" && got["server"] != "b" {
				t.Fatalf("publish_context keys should win: %v", got)
			}
		})
	}
	f := newAttachFixture(t)
	_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(map[string]string{"server": "a"}, mountCap(snw)))
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "publish_context") {
		t.Fatalf("error %q should say publish_context lacks it too", err)
	}
}

// Volumes lists the other recorded volumes, without those being released,
// and a corrupt record fails the listing rather than being skipped.
func TestRecordedVolumes(t *testing.T) {
	f := newAttachFixture(t)
	for _, id := range []string{"a", "b", "c"} {
		if err := f.svc.store.save(&record{VolumeID: id, Attacher: "nvmeof", Context: nvmeCtx(), Capability: capJSON{mountCap(snw)}, Releasing: id == "c"}); err != nil {
			t.Fatal(err)
		}
	}
	vols, err := f.svc.host.otherVolumes("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(vols) != 1 || vols[0].ID != "b" || vols[0].Context[volumecontext.KeyNQN] != testNQN {
		t.Fatalf("other volumes %+v, want only b", vols)
	}
	if err := os.WriteFile(filepath.Join(f.state, "junk"+recordSuffix), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.host.otherVolumes("a"); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt record: err = %v", err)
	}
}

// Two volumes of one subsystem unstaged at once: the subsystem is
// disconnected (exactly by one of them or both), never left connected.
func TestNVMeoFConcurrentUnstageReleases(t *testing.T) {
	f := newAttachFixture(t)
	k := nvmeTarget(f, true)
	k.targets[testNQN] = append(k.targets[testNQN], fakeNS{nsid: 2, uuid: "0d9e2c1b-0000-4000-8000-000000000002", size: 1 << 30})
	stg := map[string]string{"vol-a": filepath.Join(f.root, "stg-a"), "vol-b": filepath.Join(f.root, "stg-b")}
	f.mustStage(t, &csi.NodeStageVolumeRequest{VolumeId: "vol-a", StagingTargetPath: stg["vol-a"], VolumeCapability: mountCap(snw), VolumeContext: nvmeCtx()})
	f.mustStage(t, &csi.NodeStageVolumeRequest{VolumeId: "vol-b", StagingTargetPath: stg["vol-b"], VolumeCapability: mountCap(snw), VolumeContext: nvmeCtx(volumecontext.KeyNSID, "2")})
	errs := make(chan error, 2)
	for id, p := range stg {
		go func() { errs <- f.unstage(id, p) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if f.svc.host.nvmeSubsystemByNQN(testNQN) != nil {
		t.Fatalf("subsystem left connected; ran %q", f.sim.ran)
	}
}
