package proxy

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/zfshost"

	_ "github.com/switchyard-csi/switchyard/driver/zfsgeneric"
)

// Two real zfs-generic connections on two simulated ZFS hosts, reached
// over SSH: a clone across them streams zfs send on the old host through
// the controller into zfs receive -s on the new one (zfs.SSH.RunStream),
// and the new host ends up with the data, the target connection's own
// labels and its share.
func TestCloneAcrossRealZFSConnections(t *testing.T) {
	for _, driver := range []string{"zfs-generic-nfs", "zfs-generic-iscsi"} {
		t.Run(driver, func(t *testing.T) {
			r := newRig(t)
			ha, hb := startZFSHost(t), startZFSHost(t)
			r.write("nas-old", ha.DriverConfig(driver, "old", ""))
			r.write("nas-new", hb.DriverConfig(driver, "new", ""))
			resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-src", map[string]string{ConnectionParameter: "nas-old"}, nil))
			if err != nil {
				t.Fatal(err)
			}
			payload := bytes.Repeat([]byte("written on the old NAS\n"), 40000) // ~900 KiB
			srcDS := ha.Pool + "/k8s/old/pvc-src"
			writeVolumeData(t, ha, srcDS, payload)

			moved, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "nas-new", resp.GetVolume().GetVolumeId()))
			if err != nil {
				t.Fatal(err)
			}
			if got := moved.GetVolume().GetVolumeId(); got != "v:nas-new/pvc-moved" {
				t.Fatalf("handle %s; want v:nas-new/pvc-moved", got)
			}
			// The stream went over each host's SSH connection: the two
			// models share nothing else.
			if !ranOK(hb, "receive", "-s", dstDSName(hb)) || !ranOK(ha, "send") {
				t.Errorf("want zfs send run on the old host and zfs receive -s on the new one, over SSH")
			}
			dstDS := dstDSName(hb)
			if got := readVolumeData(t, hb, dstDS, len(payload)); !bytes.Equal(got, payload) {
				t.Fatalf("the new host's copy holds %d bytes starting %.30q; want the %d bytes written on the old host", len(got), got, len(payload))
			}
			// Labelled and shared as a fresh volume of the new connection.
			for prop, want := range map[string]string{
				"democratic-csi:managed_resource":  "true",
				"democratic-csi:csi_volume_name":   "pvc-moved",
				"democratic-csi:provision_success": "true",
			} {
				if got := modelGet(t, hb, dstDS, prop); got != want {
					t.Errorf("%s = %q on the new host; want %q", prop, got, want)
				}
			}
			vc := moved.GetVolume().GetVolumeContext()
			switch driver {
			case "zfs-generic-nfs":
				if got := modelGet(t, hb, dstDS, "sharenfs"); got != "rw,no_subtree_check,no_root_squash" {
					t.Errorf("sharenfs = %q on the new host; want the connection's share options", got)
				}
				if vc["server"] != "127.0.0.1" || vc["share"] != "/"+dstDS {
					t.Errorf("volume context %v; want the new host's export of %s", vc, dstDS)
				}
			case "zfs-generic-iscsi":
				if !strings.Contains(vc["iqn"], "pvc-moved") {
					t.Errorf("volume context %v; want an iqn for pvc-moved", vc)
				}
			}
			if snaps := modelList(t, hb, dstDS, "snapshot"); len(snaps) != 0 {
				t.Errorf("the snapshot the copy arrived with is still on the new host: %v", snaps)
			}
			for _, s := range modelList(t, ha, srcDS, "snapshot") {
				if strings.Contains(s, "@xfer-") {
					t.Errorf("the temporary snapshot of the copy is left on the old host: %s", s)
				}
			}
			list, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(list.GetEntries()); n != 2 {
				t.Fatalf("%d volumes listed; want the source and its copy", n)
			}
		})
	}
}

// The old host's connection drops in the middle of zfs send: the new
// host keeps what arrived (zfs receive -s), the copy resumes with
// zfs send -t from its token over a new connection, and the copy is whole.
func TestCloneAcrossRealZFSConnectionsResumes(t *testing.T) {
	for _, driver := range []string{"zfs-generic-nfs", "zfs-generic-iscsi"} {
		t.Run(driver, func(t *testing.T) {
			r := newRig(t)
			ha, hb := startZFSHost(t), startZFSHost(t)
			r.write("nas-old", ha.DriverConfig(driver, "old", ""))
			r.write("nas-new", hb.DriverConfig(driver, "new", ""))
			resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-src", map[string]string{ConnectionParameter: "nas-old"}, nil))
			if err != nil {
				t.Fatal(err)
			}
			payload := bytes.Repeat([]byte("resumed across a dropped connection\n"), 25000) // ~900 KiB
			writeVolumeData(t, ha, ha.Pool+"/k8s/old/pvc-src", payload)

			ha.Server.Faults().DropStreamAfter(300 << 10)
			moved, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "nas-new", resp.GetVolume().GetVolumeId()))
			if err != nil {
				t.Fatal(err)
			}
			if n := ha.Server.Stats().DroppedConnections; n != 1 {
				t.Fatalf("%d connections dropped on the old host; want the one carrying zfs send", n)
			}
			if !ranOK(ha, "send", "-t") {
				t.Fatal("no zfs send -t ran on the old host: the copy did not resume from the token")
			}
			dstDS := dstDSName(hb)
			if got := readVolumeData(t, hb, dstDS, len(payload)); !bytes.Equal(got, payload) {
				t.Fatalf("the resumed copy holds %d bytes starting %.30q; want the %d bytes written on the old host", len(got), got, len(payload))
			}
			if tok := modelGet(t, hb, dstDS, "receive_resume_token"); tok != "-" {
				t.Errorf("receive_resume_token %q after the copy; want -", tok)
			}
			if got := modelGet(t, hb, dstDS, "democratic-csi:provision_success"); got != "true" || moved.GetVolume().GetVolumeId() != "v:nas-new/pvc-moved" {
				t.Errorf("provision_success %q, handle %s", got, moved.GetVolume().GetVolumeId())
			}
		})
	}
}

func dstDSName(h *zfshost.Host) string { return h.Pool + "/k8s/new/pvc-moved" }

// ranOK reports whether h ran `zfs <words...> ...` successfully.
func ranOK(h *zfshost.Host, words ...string) bool {
	for _, r := range h.Server.Commands() {
		i := slices.Index(r.Argv, "zfs")
		if i < 0 {
			i = slices.IndexFunc(r.Argv, func(a string) bool { return strings.HasSuffix(a, "/zfs") })
		}
		if i >= 0 && r.Exit == 0 && len(r.Argv) > i+len(words) && slices.Equal(r.Argv[i+1:i+1+len(words)], words) {
			return true
		}
	}
	return false
}

func startZFSHost(t *testing.T) *zfshost.Host {
	t.Helper()
	h, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// writeVolumeData puts data into a dataset as a user would: a file in a
// filesystem's mountpoint, or the first bytes of a zvol.
func writeVolumeData(t testing.TB, h *zfshost.Host, ds string, data []byte) {
	t.Helper()
	if p, ok := h.Model.ZvolPath(ds); ok {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir, ok := h.Model.HostPath(modelGet(t, h, ds, "mountpoint"))
	if !ok {
		t.Fatalf("%s is not mounted", ds)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readVolumeData(t *testing.T, h *zfshost.Host, ds string, n int) []byte {
	t.Helper()
	if p, ok := h.Model.ZvolPath(ds); ok {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, n)
		if _, err := io.ReadFull(f, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir, ok := h.Model.HostPath(modelGet(t, h, ds, "mountpoint"))
	if !ok {
		t.Fatalf("%s is not mounted", ds)
	}
	b, err := os.ReadFile(filepath.Join(dir, "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func modelGet(t testing.TB, h *zfshost.Host, ds, prop string) string {
	t.Helper()
	var out, errb strings.Builder
	if code := h.Model.ZFS([]string{"get", "-Hp", "-o", "value", prop, ds}, nil, &out, &errb); code != 0 {
		t.Fatalf("zfs get %s %s: %s", prop, ds, errb.String())
	}
	return strings.TrimSpace(out.String())
}

func modelList(t *testing.T, h *zfshost.Host, ds, typ string) []string {
	t.Helper()
	var out, errb strings.Builder
	if code := h.Model.ZFS([]string{"list", "-H", "-o", "name", "-t", typ, "-d", "1", ds}, nil, &out, &errb); code != 0 {
		t.Fatalf("zfs list %s: %s", ds, errb.String())
	}
	return strings.Fields(out.String())
}
