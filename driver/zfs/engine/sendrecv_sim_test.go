package engine_test

// Clone and restore across connections between two simulated ZFS hosts:
// the source engine's zfs send streams through driver/transfer into the
// target engine's zfs receive, and the target finishes the dataset as a
// fresh volume. Everything goes over SSH to the simulated hosts, the
// streams included (zfs.SSH.RunStream).

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/transfer"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// noStreamPlatform is simPlatform on a host that cannot stream.
type noStreamPlatform struct{ simPlatform }

func (*noStreamPlatform) ZFSStreams() engine.ZFSStreams { return nil }

func newStreamEngine(t *testing.T, h *zfshost.Host, driver, name string) *simEngine {
	t.Helper()
	return newEngineOn(t, h, driver, name, true)
}

// newEngineOn is an engine on h whose zfs send and receive stream over SSH
// (zfs.SSH.RunStream), or whose host cannot stream.
func newEngineOn(t *testing.T, h *zfshost.Host, driver, name string, stream bool) *simEngine {
	t.Helper()
	tree, err := config.Parse([]byte(h.DriverConfig(driver, name, "")))
	if err != nil {
		t.Fatal(err)
	}
	r := config.NewReader(tree)
	cli := engine.ReadCLI(r, true)
	opts := backend.Options{File: name + ".yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	host, err := engine.NewCLIHost(opts, driver, cli)
	if err != nil {
		t.Fatal(err)
	}
	block := strings.HasSuffix(driver, "iscsi")
	fsTypes := engine.NFSFSTypes
	if block {
		fsTypes = engine.BlockFSTypes
	}
	var plat engine.Platform = &simPlatform{host}
	if !stream {
		plat = &noStreamPlatform{simPlatform{host}}
	}
	e, err := engine.New(engine.Options{Options: opts, Driver: driver, Block: block, FSTypes: fsTypes, Platform: plat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &simEngine{Engine: e, host: h, parent: h.Pool + "/k8s/" + name, detach: h.Pool + "/k8s/" + name + "-snapshots", block: block}
}

// crossCopy is what the proxy does for a source on another connection.
func crossCopy(t *testing.T, from, to *simEngine, name string, size int64, src *csi.VolumeContentSource) (*csi.Volume, error) {
	t.Helper()
	if from.StreamFormat() != to.StreamFormat() || from.StreamFormat() == "" {
		t.Fatalf("formats %q and %q", from.StreamFormat(), to.StreamFormat())
	}
	stream, est, done, err := from.SendSource(ctx, src, name)
	if err != nil {
		return nil, err
	}
	defer done()
	req := &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, to.block, "")},
		CapacityRange: &csi.CapacityRange{RequiredBytes: size}}
	sink, finish, err := to.ReceiveVolume(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := transfer.Copy(ctx, stream, sink, transfer.Options{Total: est, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil); err != nil {
		return nil, err
	}
	resp, err := finish(ctx)
	return resp.GetVolume(), err
}

func TestSendReceiveAcrossHosts(t *testing.T) {
	for _, driver := range []string{"zfs-generic-nfs", "zfs-generic-iscsi"} {
		t.Run(driver, func(t *testing.T) {
			a := newStreamEngine(t, startHost(t), driver, "old")
			b := newStreamEngine(t, startHost(t), driver, "new")
			src := a.mustCreateVolume(t, "pvc-src", 64*mib, nil)
			payload := []byte("written on the old NAS\n")
			if !a.block {
				mp := zfsGet(t, a.host, "mountpoint", a.parent+"/pvc-src")
				dir, ok := a.host.Model.HostPath(mp)
				if !ok {
					t.Fatalf("no host path for %s", mp)
				}
				if err := os.WriteFile(filepath.Join(dir, "data.txt"), payload, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := a.snapshot("snap-1", src.GetVolumeId(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				src  *csi.VolumeContentSource
			}{
				{"pvc-from-volume", &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: src.GetVolumeId()}}}},
				{"pvc-from-snapshot", &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshotId()}}}},
			} {
				v, err := crossCopy(t, a, b, c.name, 64*mib, c.src)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				ds := b.parent + "/" + v.GetVolumeId()
				// The target's own labels and share, as a fresh volume's.
				for prop, want := range map[string]string{
					"democratic-csi:managed_resource":  "true",
					"democratic-csi:csi_volume_name":   c.name,
					"democratic-csi:provision_success": "true",
				} {
					if got := zfsGet(t, b.host, prop, ds); got != want {
						t.Errorf("%s: %s = %q; want %q", c.name, prop, got, want)
					}
				}
				if len(v.GetVolumeContext()) == 0 {
					t.Errorf("%s: no volume_context (share)", c.name)
				}
				if snaps := zfsLines(t, b.host, "list", "-H", "-t", "snapshot", "-o", "name", "-d", "1", ds); len(snaps) != 0 {
					t.Errorf("%s: the snapshot it arrived with is still there: %v", c.name, snaps)
				}
				if !b.block {
					dir, _ := b.host.Model.HostPath(zfsGet(t, b.host, "mountpoint", ds))
					got, err := os.ReadFile(filepath.Join(dir, "data.txt"))
					if err != nil || string(got) != string(payload) {
						t.Errorf("%s: data on the target %q, %v; want %q", c.name, got, err, payload)
					}
				}
				// Idempotent: a retry of a finished copy returns the volume.
				again, err := crossCopy(t, a, b, c.name, 64*mib, c.src)
				if err != nil || again.GetVolumeId() != v.GetVolumeId() {
					t.Fatalf("%s retry: %v, %v", c.name, again, err)
				}
				b.mustDeleteVolume(t, v.GetVolumeId())
			}
			// The temporary snapshot of the volume source is gone.
			for _, s := range zfsLines(t, a.host, "list", "-H", "-t", "snapshot", "-o", "name", "-r", a.parent) {
				if strings.Contains(s, "@xfer-") {
					t.Errorf("temporary snapshot left: %s", s)
				}
			}
			a.mustDeleteSnapshot(t, snap.GetSnapshotId())
			a.mustDeleteVolume(t, src.GetVolumeId())
			b.assertEmpty(t)
		})
	}
}

// A source that does not exist is NOT_FOUND before anything is received.
func TestSendReceiveMissingSource(t *testing.T) {
	a := newStreamEngine(t, startHost(t), "zfs-generic-nfs", "old")
	_, _, _, err := a.SendSource(ctx, &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "pvc-none"}}}, "pvc-x")
	if status.Code(err) != codes.NotFound {
		t.Fatalf("got %v; want NOT_FOUND", err)
	}
}

// A filesystem engine and a zvol engine speak different formats, and an
// engine whose host cannot stream speaks none (the proxy refuses both).
func TestStreamFormats(t *testing.T) {
	h := startHost(t)
	fs := newStreamEngine(t, h, "zfs-generic-nfs", "f")
	vol := newStreamEngine(t, h, "zfs-generic-iscsi", "v")
	plain := newEngineOn(t, h, "zfs-generic-nfs", "p", false)
	if fs.StreamFormat() != engine.FormatFilesystem || vol.StreamFormat() != engine.FormatVolume || plain.StreamFormat() != "" {
		t.Fatalf("formats %q %q %q", fs.StreamFormat(), vol.StreamFormat(), plain.StreamFormat())
	}
}

// BenchmarkCrossHostCopy compares a copy across two simulated hosts
// through the controller (engine send -> driver/transfer -> engine
// receive, then finishing the volume) with a local zfs send | zfs receive
// on one host's model, for a volume holding 64 MiB. MB/s is reported per
// case, and the controller's allocations per copy.
func BenchmarkCrossHostCopy(b *testing.B) {
	const payload = 64 << 20
	for _, mode := range []string{"across-hosts", "local-pipe"} {
		b.Run(mode, func(b *testing.B) {
			ha, hb := startHostB(b), startHostB(b)
			a := newStreamEngineB(b, ha, "zfs-generic-nfs", "old")
			dst := newStreamEngineB(b, hb, "zfs-generic-nfs", "new")
			src, err := a.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-src", VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, false, "")},
				CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil {
				b.Fatal(err)
			}
			ds := a.parent + "/pvc-src"
			var mp strings.Builder
			ha.Model.ZFS([]string{"get", "-Hp", "-o", "value", "mountpoint", ds}, nil, &mp, io.Discard)
			dir, _ := ha.Model.HostPath(strings.TrimSpace(mp.String()))
			if err := os.WriteFile(filepath.Join(dir, "blob"), make([]byte, payload), 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(payload)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				name := "pvc-copy-" + strings.Repeat("x", i%3) + string(rune('a'+i%26))
				switch mode {
				case "across-hosts":
					v, err := crossCopyB(a, dst, name, src.GetVolume().GetVolumeId())
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if _, err := dst.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				case "local-pipe":
					snap := ds + "@b" + name
					ha.Model.ZFS([]string{"snapshot", snap}, nil, io.Discard, io.Discard)
					pr, pw := io.Pipe()
					go func() {
						ha.Model.ZFS([]string{"send", snap}, nil, pw, io.Discard)
						pw.Close()
					}()
					if code := ha.Model.ZFS([]string{"receive", a.parent + "/" + name}, pr, io.Discard, io.Discard); code != 0 {
						b.Fatalf("local receive exited %d", code)
					}
					b.StopTimer()
					ha.Model.ZFS([]string{"destroy", "-r", a.parent + "/" + name}, nil, io.Discard, io.Discard)
					ha.Model.ZFS([]string{"destroy", snap}, nil, io.Discard, io.Discard)
					b.StartTimer()
				}
			}
		})
	}
}

func startHostB(b *testing.B) *zfshost.Host {
	h, err := zfshost.Start(zfshost.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

func newStreamEngineB(b *testing.B, h *zfshost.Host, driver, name string) *simEngine {
	tree, err := config.Parse([]byte(h.DriverConfig(driver, name, "")))
	if err != nil {
		b.Fatal(err)
	}
	cli := engine.ReadCLI(config.NewReader(tree), true)
	opts := backend.Options{File: name + ".yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	host, err := engine.NewCLIHost(opts, driver, cli)
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.New(engine.Options{Options: opts, Driver: driver, FSTypes: engine.NFSFSTypes, Platform: &simPlatform{host}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return &simEngine{Engine: e, host: h, parent: h.Pool + "/k8s/" + name}
}

func crossCopyB(from, to *simEngine, name, srcID string) (*csi.Volume, error) {
	src := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: srcID}}}
	stream, est, done, err := from.SendSource(ctx, src, name)
	if err != nil {
		return nil, err
	}
	defer done()
	req := &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, false, "")},
		CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}}
	sink, finish, err := to.ReceiveVolume(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := transfer.Copy(ctx, stream, sink, transfer.Options{Total: est, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil); err != nil {
		return nil, err
	}
	resp, err := finish(ctx)
	return resp.GetVolume(), err
}
