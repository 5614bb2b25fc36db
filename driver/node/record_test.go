package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// A restarted plugin (a new Service over the same StateDir) still knows
// where the volume is staged and published, so the single-writer rule and
// the unstage guard hold across restarts.
func TestRecordsSurviveRestart(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snsw))
	f.publish(t, f.target, mountCap(snsw), false)

	f.svc = f.newService(t)
	ctx := context.Background()
	_, err := f.svc.NodePublishVolume(ctx, f.publishReq(filepath.Join(f.root, "pods", "other"), mountCap(snsw), false))
	wantCode(t, err, codes.FailedPrecondition)
	f.publish(t, f.target, mountCap(snsw), false) // idempotent after restart
	unstage := &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging}
	_, err = f.svc.NodeUnstageVolume(ctx, unstage)
	wantCode(t, err, codes.FailedPrecondition)

	if _, err := f.svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: f.target}); err != nil {
		t.Fatal(err)
	}
	f.svc = f.newService(t)
	if _, err := f.svc.NodeUnstageVolume(ctx, unstage); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(f.state)
	if len(entries) != 0 {
		t.Fatalf("state dir not empty after unstage: %v", entries)
	}
}

func TestStoreFileNames(t *testing.T) {
	st, err := newStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"v:conn/pvc-123", "v:conn/pvc-124", "../../etc/passwd", strings.Repeat("x/", 64), "plain"}
	seen := map[string]bool{}
	for _, id := range ids {
		f := st.file(id)
		if filepath.Dir(f) != st.dir {
			t.Fatalf("id %q maps outside the state dir: %s", id, f)
		}
		if len(filepath.Base(f)) != 64+len(recordSuffix) {
			t.Fatalf("id %q: file name %q", id, filepath.Base(f))
		}
		if seen[f] {
			t.Fatalf("two ids share %s", f)
		}
		seen[f] = true

		want := &record{VolumeID: id, Attacher: "hostpath", StagingPath: "/s", Staged: true,
			Capability: capJSON{mountCap(snsw)},
			Targets:    map[string]target{"/t": {Readonly: true, Capability: capJSON{mountCap(snsw)}}}}
		if err := st.save(want); err != nil {
			t.Fatal(err)
		}
		got, err := st.load(id)
		if err != nil {
			t.Fatal(err)
		}
		if got.VolumeID != id || !got.Staged || !proto.Equal(got.Capability.VolumeCapability, want.Capability.VolumeCapability) ||
			!got.Targets["/t"].Readonly || !proto.Equal(got.Targets["/t"].Capability.VolumeCapability, mountCap(snsw)) {
			t.Fatalf("round trip of %q: %+v", id, got)
		}
	}
	entries, _ := os.ReadDir(st.dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), recordSuffix) {
			t.Fatalf("stray file %s after saves", e.Name())
		}
	}
}

func TestStoreDropsTempLeftovers(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, tempPrefix+"123")
	if err := os.WriteFile(left, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newStore(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("temp leftover kept: %v", err)
	}
}

func TestCorruptRecordIsReported(t *testing.T) {
	f := newFixture(t)
	file := f.svc.store.file(volID)
	if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.NodeStageVolume(context.Background(), f.stageReq(mountCap(snw)))
	wantCode(t, err, codes.Internal)
	if !strings.Contains(err.Error(), file) {
		t.Fatalf("error %q does not name the file", err)
	}
}

func TestRecordHoldsNoSecrets(t *testing.T) {
	f := newFixture(t)
	r := f.stageReq(mountCap(snw))
	r.Secrets = map[string]string{"node-db.node.session.auth.password": "hunter2-secret"}
	if _, err := f.svc.NodeStageVolume(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.svc.store.file(volID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "auth.password") {
		t.Fatalf("secret persisted: %s", b)
	}
}
