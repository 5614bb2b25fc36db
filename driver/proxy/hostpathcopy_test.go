package proxy

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	_ "github.com/switchyard-csi/switchyard/driver/localhostpath"
)

// A local-hostpath volume and snapshot are copied into another
// local-hostpath connection: files, modes, directories and links arrive;
// the new volume is the target connection's own.
func TestCloneAcrossLocalHostPath(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.Topology.Type = TopologyNode })
	baseA, baseB := filepath.Join(r.dir, "a"), filepath.Join(r.dir, "b")
	r.write("hp-a", "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+baseA+"\n  controllerBasePath: "+baseA+"\n")
	r.write("hp-b", "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+baseB+"\n  controllerBasePath: "+baseB+"\n")
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-src", map[string]string{ConnectionParameter: "hp-a"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	srcDir := filepath.Join(baseA, "v", "pvc-src")
	must(t, os.MkdirAll(filepath.Join(srcDir, "sub"), 0o750))
	must(t, os.WriteFile(filepath.Join(srcDir, "sub", "data.txt"), []byte("on the old disk\n"), 0o640))
	must(t, os.Symlink("sub/data.txt", filepath.Join(srcDir, "link")))

	v, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "hp-b", resp.GetVolume().GetVolumeId()))
	if err != nil {
		t.Fatal(err)
	}
	if v.GetVolume().GetVolumeId() != "v:hp-b/pvc-moved" {
		t.Fatalf("handle %s", v.GetVolume().GetVolumeId())
	}
	dst := filepath.Join(baseB, "v", "pvc-moved")
	got, err := os.ReadFile(filepath.Join(dst, "link"))
	if err != nil || string(got) != "on the old disk\n" {
		t.Fatalf("copied data %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "sub", "data.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v; want 0640", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "sub")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("dir mode %v, %v; want 0750", fi.Mode(), err)
	}
	// The target volume is a volume of hp-b like any other.
	if err := r.validate(v.GetVolume().GetVolumeId()); err != nil {
		t.Fatal(err)
	}
	// A snapshot source, and a missing source (nothing made).
	snap, err := r.ctl.CreateSnapshot(context.Background(), &csipb.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: resp.GetVolume().GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-restored", "hp-b", snap.GetSnapshot().GetSnapshotId())); err != nil {
		t.Fatalf("restore across: %v", err)
	}
	got, err = os.ReadFile(filepath.Join(baseB, "v", "pvc-restored", "sub", "data.txt"))
	if err != nil || string(got) != "on the old disk\n" {
		t.Fatalf("restored data %q, %v", got, err)
	}
	_, err = r.ctl.CreateVolume(context.Background(), cloneReq("pvc-none", "hp-b", "v:hp-a/pvc-gone"))
	wantCode(t, "missing source", err, codes.NotFound, "pvc-gone")
	if _, err := os.Stat(filepath.Join(baseB, "v", "pvc-none")); !os.IsNotExist(err) {
		t.Fatalf("a target was left for a missing source: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An entry that would write outside the volume (through a link, or by
// name) is refused and nothing outside is touched.
func TestUnpackStaysInsideVolume(t *testing.T) {
	outside := t.TempDir()
	vol := t.TempDir()
	root, err := os.OpenRoot(vol)
	must(t, err)
	defer root.Close()
	must(t, unpackOne(root, &tar.Header{Name: "esc", Typeflag: tar.TypeSymlink, Linkname: outside}, nil))
	for _, name := range []string{"esc/owned", "../owned"} {
		err := unpackOne(root, &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}, strings.NewReader("x"))
		if err == nil {
			t.Errorf("%s: written", name)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("files outside the volume: %v", entries)
	}
}
