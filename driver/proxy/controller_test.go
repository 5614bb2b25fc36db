package proxy

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Handles that cannot name a volume: NOT_FOUND where one is needed, OK for
// deletes, and no connection file is ever opened for them.
func TestHandlesThatNameNothing(t *testing.T) {
	r := newRig(t)
	// Files an escaping handle would reach if it were ever used as a path.
	r.fake("a")
	if err := os.WriteFile(filepath.Join(r.dir, "x.yaml"), []byte("driver: fake-test\nfake:\n  label: escaped\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	built := fakes.built.Load()
	ctx := context.Background()
	for _, h := range []string{"pvc-1", "a/pvc-1", "x:a/pvc-1", "s:a/pvc-1", "v:a", "v:/pvc-1", "v:a/", "v:../x", "v:./x", "v:" + strings.Repeat("a", 64) + "/pvc-1", "v:a\x00/b"} {
		t.Run(h, func(t *testing.T) {
			if _, err := r.ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: h}); err != nil {
				t.Errorf("DeleteVolume: %v; want OK", err)
			}
			wantCode(t, "ValidateVolumeCapabilities", r.validate(h), codes.NotFound)
			_, err := r.ctl.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: h, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1}})
			wantCode(t, "ControllerExpandVolume", err, codes.NotFound)
			_, err = r.ctl.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: h})
			wantCode(t, "CreateSnapshot", err, codes.NotFound)
			_, err = r.ctl.ControllerGetVolume(ctx, &csipb.ControllerGetVolumeRequest{VolumeId: h})
			wantCode(t, "ControllerGetVolume", err, codes.NotFound)
			sh := strings.Replace(h, "v:", "s:", 1)
			if sh == "s:a/pvc-1" { // a well-formed snapshot handle: covered elsewhere
				sh = "v:a/snap"
			}
			if _, err := r.ctl.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: sh}); err != nil {
				t.Errorf("DeleteSnapshot(%q): %v; want OK", sh, err)
			}
			_, err = r.ctl.GetSnapshot(ctx, &csipb.GetSnapshotRequest{SnapshotId: sh})
			wantCode(t, "GetSnapshot", err, codes.NotFound)
			ls, err := r.ctl.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{SnapshotId: sh})
			if err != nil || len(ls.GetEntries()) != 0 {
				t.Errorf("ListSnapshots(%q) = %v, %v; want empty", sh, ls, err)
			}
		})
	}
	if n := fakes.built.Load() - built; n != 0 {
		t.Fatalf("%d drivers were built for handles that name nothing; want 0", n)
	}
}

func TestUnknownConnection(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	_, err := r.create("nosuch", "pvc-1")
	wantCode(t, "CreateVolume", err, codes.InvalidArgument, "nosuch", "no file nosuch.yaml", r.folder)
	_, err = r.ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: "v:nosuch/pvc-1"})
	wantCode(t, "DeleteVolume", err, codes.FailedPrecondition, "nosuch.yaml")
	_, err = r.ctl.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: "s:nosuch/snap"})
	wantCode(t, "DeleteSnapshot", err, codes.FailedPrecondition, "nosuch.yaml")
	wantCode(t, "ValidateVolumeCapabilities", r.validate("v:nosuch/pvc-1"), codes.FailedPrecondition)
	_, err = r.ctl.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "v:nosuch/pvc-1"})
	wantCode(t, "ControllerExpandVolume", err, codes.FailedPrecondition)
	_, err = r.ctl.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "v:nosuch/pvc-1"})
	wantCode(t, "CreateSnapshot", err, codes.FailedPrecondition)
}

func TestConnectionParameter(t *testing.T) {
	r := newRig(t)
	_, err := r.create("", "pvc-1")
	wantCode(t, "no parameter", err, codes.InvalidArgument, `"connection"`, "is required")
	for _, bad := range []string{"../x", "a/b", ".", strings.Repeat("c", 64)} {
		_, err := r.create(bad, "pvc-1")
		wantCode(t, "parameter "+bad, err, codes.InvalidArgument, "connection")
	}
	if _, err := os.Stat(filepath.Join(r.dir, "x.yaml")); err == nil {
		t.Fatal("a file outside the folder appeared")
	}
}

func TestBrokenConnectionFiles(t *testing.T) {
	tests := []struct {
		name, content string
		code          codes.Code
		words         []string
	}{
		{"invalid-yaml", "driver: [unclosed", codes.FailedPrecondition, []string{"invalid-yaml.yaml", "invalid YAML"}},
		{"not-a-map", "- a\n- b\n", codes.FailedPrecondition, []string{"top level must be a map"}},
		{"no-driver", "fake:\n  label: x\n", codes.FailedPrecondition, []string{"no-driver.yaml", "driver: required"}},
		{"unknown-driver", "driver: teleport\n", codes.FailedPrecondition, []string{"unknown driver \"teleport\"", "known: ", "fake-test"}},
		{"nested-proxy", "driver: proxy\nproxy:\n  configFolder: /tmp\n", codes.InvalidArgument, []string{"proxy cannot be used behind the proxy"}},
		{"objectivefs", "driver: objectivefs\n", codes.InvalidArgument, []string{"objectivefs cannot be used in switchyard, standalone or behind the proxy"}},
		{"ephemeral", "driver: zfs-local-ephemeral-inline\n", codes.InvalidArgument, []string{"zfs-local-ephemeral-inline cannot be used"}},
		{"planned", "driver: synology-iscsi\n", codes.FailedPrecondition, []string{"not available in this build"}},
		{"missing-key", "driver: fake-test\n", codes.FailedPrecondition, []string{"missing-key.yaml: fake.label: required"}},
		{"bad-topology", "driver: fake-test\nfake:\n  label: t\nproxy:\n  perDriver:\n    topology: {zone: a}\n", codes.FailedPrecondition, []string{"proxy.perDriver.topology"}},
	}
	r := newRig(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.write(tt.name, tt.content)
			_, err := r.create(tt.name, "pvc-1")
			wantCode(t, "CreateVolume", err, tt.code, tt.words...)
			_, err = r.ctl.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: "v:" + tt.name + "/pvc-1"})
			wantCode(t, "DeleteVolume", err, tt.code, tt.words...)
		})
	}
}

// A node-local backend needs per-node topology behind the proxy.
func TestNodeLocalNeedsNodeTopology(t *testing.T) {
	r := newRig(t)
	r.write("local", "driver: fake-local-test\nfake:\n  label: l\n")
	_, err := r.create("local", "pvc-1")
	wantCode(t, "CreateVolume", err, codes.FailedPrecondition, "proxy.nodeTopology.type: node")
}

func TestHandleTooLongRemovesTheVolume(t *testing.T) {
	r := newRig(t)
	conn := strings.Repeat("c", 63)
	label := r.fake(conn, "  idPrefix: "+strings.Repeat("p", 60))
	_, err := r.create(conn, "pvc-0123456789")
	wantCode(t, "CreateVolume", err, codes.InvalidArgument, conn, "would be 140 bytes", "128", "shorter connection name")
	if vols := fakeVolumes(label); len(vols) != 0 {
		t.Fatalf("backend still holds %v after the failed create", vols)
	}
	// The same backend id under a short name fits.
	r.fake("c", "  idPrefix: "+strings.Repeat("p", 60))
	resp, err := r.create("c", "pvc-0123456789")
	if err != nil || len(resp.GetVolume().GetVolumeId()) > MaxHandleLen {
		t.Fatalf("short connection: %v, %v", resp, err)
	}
}

// A connection file turned to garbage while it has volumes: its calls fail
// naming the file and the parse error, other connections keep working,
// and repairing the file brings it back with its volume intact.
func TestGarbageFileWhileVolumesExist(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	labelB := r.fake("b")
	va, err := r.create("a", "pvc-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.create("b", "pvc-b"); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(r.folder, "a.yaml"))
	r.write("a", "driver: fake-test\nfake: {label: [oops\n")
	handle := va.GetVolume().GetVolumeId()
	wantCode(t, "validate on garbage", r.validate(handle), codes.FailedPrecondition, "a.yaml", "invalid YAML")
	_, err = r.ctl.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: handle})
	wantCode(t, "delete on garbage", err, codes.FailedPrecondition, "a.yaml")
	if err := r.validate("v:b/pvc-b"); err != nil {
		t.Fatalf("connection b broke too: %v", err)
	}
	if _, err := r.create("b", "pvc-b2"); err != nil || fakeVolumes(labelB)["pvc-b2"] != 1 {
		t.Fatalf("create on b: %v", err)
	}
	r.write("a", string(good)+"\n# repaired\n")
	if err := r.validate(handle); err != nil {
		t.Fatalf("after repair: %v", err)
	}
}

func TestLiveReloadClosesOldDriverAfterInFlightCalls(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	l1, err := r.conns.Acquire(context.Background(), "a", false)
	if err != nil {
		t.Fatal(err)
	}
	closed := fakes.closed.Load()
	r.fake("a", "  idPrefix: new-") // a changed file
	l2, err := r.conns.Acquire(context.Background(), "a", false)
	if err != nil {
		t.Fatal(err)
	}
	if l1.Driver == l2.Driver {
		t.Fatal("a changed file did not give a new driver")
	}
	if fakes.closed.Load() != closed {
		t.Fatal("old driver closed while a call was still using it")
	}
	l1.Release()
	if fakes.closed.Load() != closed+1 {
		t.Fatal("old driver not closed after its last call")
	}
	l2.Release()
	resp, err := r.create("a", "pvc-1")
	if err != nil || resp.GetVolume().GetVolumeId() != "v:a/new-pvc-1" {
		t.Fatalf("create after reload = %v, %v; want the new config's id", resp, err)
	}
	// Removing the file closes the driver and makes the connection unknown.
	os.Remove(filepath.Join(r.folder, "a.yaml"))
	wantCode(t, "after removal", r.validate("v:a/new-pvc-1"), codes.FailedPrecondition, "no file a.yaml")
	if fakes.closed.Load() != closed+2 {
		t.Fatal("driver of a removed file not closed")
	}
}

func TestIdleDriversAreClosed(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.CacheTimeout = 0 })
	r.set.CacheTimeout = 60 * 1e9
	now := r.conns.now()
	r.conns.now = func() time.Time { return now }
	r.fake("a")
	if _, err := r.create("a", "pvc-1"); err != nil {
		t.Fatal(err)
	}
	closed := fakes.closed.Load()
	r.conns.closeIdle()
	if fakes.closed.Load() != closed || r.conns.Open() != 1 {
		t.Fatal("a fresh driver was closed")
	}
	now = now.Add(61 * time.Second)
	r.conns.closeIdle()
	if fakes.closed.Load() != closed+1 || r.conns.Open() != 0 {
		t.Fatalf("idle driver not closed: closed %d, open %d", fakes.closed.Load()-closed, r.conns.Open())
	}
	if err := r.validate("v:a/pvc-1"); err != nil {
		t.Fatalf("call after idle close: %v", err)
	}
}

func TestNoCacheBuildsADriverPerCall(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.NoCache = true })
	r.fake("a")
	built, closed := fakes.built.Load(), fakes.closed.Load()
	for i := 0; i < 3; i++ {
		if _, err := r.create("a", "pvc-1"); err != nil {
			t.Fatal(err)
		}
	}
	if b, c := fakes.built.Load()-built, fakes.closed.Load()-closed; b != 3 || c != 3 {
		t.Fatalf("built %d, closed %d; want 3 and 3", b, c)
	}
}

func TestDefaultConnectionServesLegacyHandles(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.DefaultConnection = "main" })
	label := r.fake("main")
	resp, err := r.create("", "pvc-new")
	if err != nil || resp.GetVolume().GetVolumeId() != "v:main/pvc-new" {
		t.Fatalf("create without parameter = %v, %v", resp, err)
	}
	// A volume the backend made before the switch to the proxy.
	fakes.Lock()
	fakes.vols[label]["pvc-legacy"] = 1
	fakes.Unlock()
	if err := r.validate("pvc-legacy"); err != nil {
		t.Fatalf("legacy handle: %v", err)
	}
	if _, err := r.ctl.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: "pvc-legacy"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := fakeVolumes(label)["pvc-legacy"]; ok {
		t.Fatal("legacy volume not deleted through the default connection")
	}
}

func TestCloneAcrossConnectionsRefused(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	r.fake("b")
	_, err := r.ctl.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "clone", Parameters: map[string]string{"connection": "b"},
		VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: "v:a/pvc-1"}}}})
	wantCode(t, "clone", err, codes.InvalidArgument, "connection a", "on b")
}

func TestGetCapacity(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	r.fake("nocap", "  noCapacity: true")
	tests := []struct {
		conn string
		want int64
	}{{"", 0}, {"a", 1000}, {"nocap", math.MaxInt64}}
	for _, tt := range tests {
		resp, err := r.ctl.GetCapacity(context.Background(), &csipb.GetCapacityRequest{Parameters: map[string]string{"connection": tt.conn}})
		if err != nil || resp.GetAvailableCapacity() != tt.want {
			t.Errorf("GetCapacity(%q) = %v, %v; want %d", tt.conn, resp, err, tt.want)
		}
	}
}

func TestUnsupportedMethodIsInvalidArgument(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	_, err := r.ctl.CreateSnapshot(context.Background(), &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "v:a/pvc-1"})
	wantCode(t, "CreateSnapshot", err, codes.InvalidArgument, "connection a (driver fake-test) does not support CreateSnapshot")
}

func TestGetSnapshotThroughList(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	resp, err := r.ctl.GetSnapshot(context.Background(), &csipb.GetSnapshotRequest{SnapshotId: "s:a/snap-1"})
	if err != nil || resp.GetSnapshot().GetSnapshotId() != "s:a/snap-1" || resp.GetSnapshot().GetSourceVolumeId() != "v:a/pvc-1" {
		t.Fatalf("GetSnapshot = %v, %v; want decorated ids", resp, err)
	}
	_, err = r.ctl.GetSnapshot(context.Background(), &csipb.GetSnapshotRequest{SnapshotId: "s:a/snap-2"})
	wantCode(t, "missing snapshot", err, codes.NotFound, "connection a", "snap-2")
}

// A 10 KB handle or token is quoted back only in part (echo.Quote).
func TestLongInputsAreNotEchoed(t *testing.T) {
	r := newRig(t)
	r.fake("a")
	ctx := context.Background()
	long := "v:a/" + strings.Repeat("x", 10_000)
	_, err := r.ctl.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "v:" + strings.Repeat("y", 10_000), CapacityRange: &csipb.CapacityRange{RequiredBytes: 1}})
	checkShort(t, "ControllerExpandVolume", err, codes.NotFound)
	_, err = r.ctl.GetSnapshot(ctx, &csipb.GetSnapshotRequest{SnapshotId: long})
	checkShort(t, "GetSnapshot", err, codes.NotFound)
	_, err = r.ctl.ListVolumes(ctx, &csipb.ListVolumesRequest{StartingToken: strings.Repeat("z", 10_000)})
	checkShort(t, "ListVolumes", err, codes.Aborted)
	_, err = r.ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-1", Parameters: map[string]string{"connection": "a"},
		VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: strings.Repeat("w", 10_000)}}}})
	checkShort(t, "CreateVolume from a source", err, codes.NotFound)
}

func checkShort(t *testing.T, call string, err error, code codes.Code) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code || len(st.Message()) > 400 || !strings.Contains(st.Message(), "bytes)") {
		t.Errorf("%s: %v, %d bytes: %.200s; want %v quoting the input in part", call, st.Code(), len(st.Message()), st.Message(), code)
	}
}

// A call waiting for a connection's driver to be built gives up when its
// own deadline passes (ABORTED), instead of queueing behind the build.
func TestWaitingForABuildHonoursTheDeadline(t *testing.T) {
	fakeBuildGate = make(chan struct{})
	r := newRig(t)
	r.write("slow", "driver: fake-test\nfake:\n  label: slow\n  slowBuild: true\n")
	first := make(chan error, 1)
	go func() {
		l, err := r.conns.Acquire(context.Background(), "slow", false)
		if err == nil {
			l.Release()
		}
		first <- err
	}()
	<-fakeBuildStarted // the first call is inside the constructor
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.conns.Acquire(ctx, "slow", false)
	wantCode(t, "a call behind a slow build", err, codes.Aborted, "connection slow")
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("waited %v for a 100ms deadline", waited)
	}
	close(fakeBuildGate)
	if err := <-first; err != nil {
		t.Fatalf("the first call: %v", err)
	}
}
