package zfsgeneric_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// Every one-exec program (create, expand, snapshot, delete; the create
// alone is TestDroppedConnectionMidProgramConverges) under a host
// that drops the connection after the n-th command of a program has taken
// effect: every call answers UNAVAILABLE or succeeds, its retry finishes
// the work, and nothing half-made is left (issue 16, bad input).
func TestDroppedConnectionMidEveryProgramConverges(t *testing.T) {
	for n := 1; n <= 3; n++ {
		t.Run(fmt.Sprintf("after-%d", n), func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, ""))
			if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
				t.Fatal(err)
			}
			// retry runs op with the fault armed until it succeeds;
			// it reports how many attempts failed.
			retry := func(what string, op func() error) int {
				t.Helper()
				h.Server.Faults().DropAfter(n)
				defer h.Server.Faults().DropAfter(0)
				failed := 0
				for attempt := 0; attempt < 6; attempt++ {
					err := op()
					if err == nil {
						return failed
					}
					if status.Code(err) != codes.Unavailable {
						t.Fatalf("%s, attempt %d: %v (want UNAVAILABLE while the connection drops)", what, attempt, err)
					}
					failed++
				}
				t.Fatalf("%s never converged", what)
				return failed
			}
			var vol *csi.Volume
			hit := retry("CreateVolume", func() error {
				r, err := d.CreateVolume(ctx, createReq("pvc-drop", 1<<30))
				vol = r.GetVolume()
				return err
			})
			ds := "tank/k8s/v/pvc-drop"
			get := func(prop string) string {
				t.Helper()
				v := zfsLines(t, h, "get", "-Hp", "-o", "value", prop, ds)
				if len(v) != 1 {
					t.Fatalf("%s of %s: %v", prop, ds, v)
				}
				return v[0]
			}
			if get("democratic-csi:provision_success") != "true" || get("sharenfs") == "off" || vol.GetVolumeContext()["share"] != "/tank/k8s/v/pvc-drop" {
				t.Fatalf("after create: provision_success %s, sharenfs %s, context %v", get("democratic-csi:provision_success"), get("sharenfs"), vol.GetVolumeContext())
			}
			hit += retry("ControllerExpandVolume", func() error {
				_, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: vol.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}})
				return err
			})
			if got := get("refquota"); got != strconv.Itoa(2<<30) {
				t.Fatalf("refquota after expand: %s", got)
			}
			var snap *csi.Snapshot
			hit += retry("CreateSnapshot", func() error {
				r, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-drop", SourceVolumeId: vol.GetVolumeId()})
				snap = r.GetSnapshot()
				return err
			})
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", ds); len(got) != 1 || !snap.GetReadyToUse() {
				t.Fatalf("snapshots: %v (ready %v)", got, snap.GetReadyToUse())
			}
			hit += retry("DeleteSnapshot", func() error {
				_, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()})
				return err
			})
			hit += retry("DeleteVolume", func() error {
				_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
				return err
			})
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-r", "-t", "all", "tank/k8s/v"); len(got) != 1 {
				t.Fatalf("left on the host: %v", got)
			}
			if hit == 0 {
				t.Fatalf("the drop after %d commands never hit a call", n)
			}
		})
	}
}

// A login shell that is not POSIX (fish, tcsh) is refused before any
// program runs, with an error naming the shell, the setting
// (sshConnection.username's login shell) and the fix.
func TestNonPOSIXLoginShellIsNamed(t *testing.T) {
	for _, shell := range []string{"/usr/bin/fish", "/bin/tcsh"} {
		t.Run(shell, func(t *testing.T) {
			h := startHost(t, zfshost.Options{Shell: shell})
			d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, ""))
			_, err := d.CreateVolume(ctx, createReq("pvc-sh", 1<<30))
			base := shell[strings.LastIndexByte(shell, '/')+1:]
			wantStatus(t, "create with login shell "+shell, err, codes.FailedPrecondition, base, "not a POSIX shell", "sshConnection.username", "chsh -s /bin/sh")
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-r", "tank"); len(got) > 2 {
				t.Fatalf("something was made: %v", got)
			}
		})
	}
}

// A create whose one-exec program would be longer than zfs.MaxProgram
// (here: datasetProperties templated from 7,000-byte parameters) is not
// sent as one program: it takes the step-by-step path, whose commands stay
// under Linux's limit on one argument (MAX_ARG_STRLEN, 128 KiB: sshd hands
// the command line to the shell as one argument), and the volume is made
// with every property.
func TestProgramOverTheLimitIsSplit(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	const props, size = 10, 7000
	var extra strings.Builder
	extra.WriteString("  datasetProperties:\n")
	params := map[string]string{}
	for i := range props {
		fmt.Fprintf(&extra, "    \"switchyard-test:p%d\": \"{{ parameters.p%d }}\"\n", i, i)
		params[fmt.Sprintf("p%d", i)] = strings.Repeat(strconv.Itoa(i), size)
	}
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, extra.String()))
	if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	h.Server.ResetCommands()
	req := createReq("pvc-long", 1<<30)
	req.Parameters = params
	if _, err := d.CreateVolume(ctx, req); err != nil {
		t.Fatal(err)
	}
	recs := h.Server.Commands()
	if n, _ := execs(recs); n < 2 {
		t.Fatalf("%d exec: the long program was sent whole", n)
	}
	longest := 0
	for _, r := range recs {
		longest = max(longest, len(r.Line))
	}
	if longest <= zfs.MaxProgram-props*size || longest >= 128<<10 {
		t.Fatalf("longest command line %d bytes; want the create's (over %d) and under 128 KiB", longest, zfs.MaxProgram-props*size)
	}
	for i := range props {
		v := zfsLines(t, h, "get", "-H", "-o", "value", fmt.Sprintf("switchyard-test:p%d", i), "tank/k8s/v/pvc-long")
		if len(v) != 1 || v[0] != params[fmt.Sprintf("p%d", i)] {
			t.Fatalf("property p%d: %d bytes", i, len(strings.Join(v, "")))
		}
	}
	if got := zfsLines(t, h, "get", "-H", "-o", "value", "democratic-csi:provision_success", "tank/k8s/v/pvc-long"); len(got) != 1 || got[0] != "true" {
		t.Fatalf("provision_success: %v", got)
	}
}
