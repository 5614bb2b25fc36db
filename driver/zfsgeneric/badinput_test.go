package zfsgeneric_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// Values from StorageClass parameters reach zfs as one argument, whatever
// they contain: the simulator records argv after its shell parsed the line.
func TestHostileParameterReachesZFSAsOneArgument(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, `  datasetProperties:
    "org.example:note": "{{{ parameters.note }}}"
`))
	hostile := []string{
		"two words", `it's "quoted"`, "semi;colon && echo pwned", "$(touch /tmp/pwned)", "`id`", "new\nline", `back\slash $HOME`,
	}
	for i, v := range hostile {
		req := createReq(fmt.Sprintf("pvc-%d", i), 1<<30)
		req.Parameters = map[string]string{"note": v}
		if _, err := d.CreateVolume(ctx, req); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		want := "org.example:note=" + v
		found := false
		for _, r := range h.Server.Commands() {
			if len(r.Argv) > 1 && r.Argv[1] == "create" && slices.Contains(r.Argv, want) {
				found = true
			}
			for _, a := range r.Argv {
				if a == "pwned" || a == "id" || a == "touch" {
					t.Fatalf("%q: the host ran %v", v, r.Argv)
				}
			}
		}
		if !found {
			t.Fatalf("%q: no zfs create got %q as one argument", v, want)
		}
		got := zfsLines(t, h, "get", "-H", "-o", "value", "org.example:note", fmt.Sprintf("tank/k8s/v/pvc-%d", i))
		if strings.Join(got, "\n") != v {
			t.Fatalf("%q: stored %q", v, got)
		}
	}
}

func TestBadNamesAreRefusedBeforeTheHost(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, ""))
	for _, name := range []string{"a b", "x;rm -rf /", "$(id)", "../etc", "-rf", "pvc\n1"} {
		before := len(h.Server.Commands())
		_, err := d.CreateVolume(ctx, createReq(name, 1<<30))
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%q: %v, want INVALID_ARGUMENT", name, err)
		}
		if n := len(h.Server.Commands()); n != before {
			t.Errorf("%q: %d commands ran on the host", name, n-before)
		}
	}
}

func TestWrongPasswordNamesHostAndUser(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	cfg := strings.Replace(genericConfig(h, zfsgeneric.DriverNFS, ""), "password: "+h.Password, "password: not-the-password", 1)
	d := newDriver(t, cfg)
	_, err := d.CreateVolume(ctx, createReq("pvc-1", 1<<30))
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("wrong password: %v, want FAILED_PRECONDITION", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, fmt.Sprintf("root@127.0.0.1:%d", h.Port)) || strings.Contains(msg, "not-the-password") {
		t.Fatalf("message must name user@host:port and never the password: %s", msg)
	}
}

// The connection drops after n commands of a CreateVolume (each command
// has taken effect, its answer is lost). The driver's retry must converge
// on exactly one dataset and one share.
func TestDroppedConnectionMidCreateConverges(t *testing.T) {
	for _, driver := range []string{zfsgeneric.DriverNFS, zfsgeneric.DriverISCSI, zfsgeneric.DriverNVMeoF} {
		for n := 1; n <= 6; n++ {
			t.Run(fmt.Sprintf("%s/after-%d", driver, n), func(t *testing.T) {
				h := startHost(t, zfshost.Options{})
				d := newDriver(t, genericConfig(h, driver, ""))
				h.Server.Faults().DropAfter(n)
				var resp *csi.CreateVolumeResponse
				var err error
				failures := 0
				for attempt := 0; attempt < 5; attempt++ {
					resp, err = d.CreateVolume(ctx, createReq("pvc-1", 1<<30))
					if err == nil {
						break
					}
					failures++
					if c := status.Code(err); c != codes.Unavailable {
						t.Fatalf("attempt %d: %v (want UNAVAILABLE while the connection drops)", attempt, err)
					}
				}
				if err != nil {
					t.Fatalf("never converged: %v", err)
				}
				// Every create runs at least 4 commands: the fault must have hit.
				if n <= 4 && failures == 0 {
					t.Fatalf("the connection drop after %d commands never hit the create", n)
				}
				if got := zfsLines(t, h, "list", "-H", "-o", "name", "-r", "-t", "filesystem,volume", "tank/k8s/v"); len(got) != 2 {
					t.Fatalf("datasets: %v", got)
				}
				if got := zfsLines(t, h, "get", "-H", "-o", "value", "democratic-csi:provision_success", "tank/k8s/v/pvc-1"); len(got) != 1 || got[0] != "true" {
					t.Fatalf("provision_success: %v", got)
				}
				switch driver {
				case zfsgeneric.DriverISCSI:
					lio := h.Server.LIO()
					if len(lio.Targets) != 1 || len(lio.StorageObjects) != 1 {
						t.Fatalf("LIO: %+v", lio)
					}
				case zfsgeneric.DriverNVMeoF:
					if n := len(h.Server.NVMet().Subsystems); n != 1 {
						t.Fatalf("nvmet subsystems: %d", n)
					}
				}
				if resp.GetVolume().GetVolumeContext()["node_attach_driver"] == "" {
					t.Fatalf("volume context: %v", resp.GetVolume().GetVolumeContext())
				}
			})
		}
	}
}

func TestPoolFull(t *testing.T) {
	h := startHost(t, zfshost.Options{PoolSize: 1 << 30})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverISCSI, "  zvolEnableReservation: true\n"))
	_, err := d.CreateVolume(ctx, createReq("pvc-big", 4<<30))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "out of space") {
		t.Fatalf("4 GiB reserved zvol in a 1 GiB pool: %v, want RESOURCE_EXHAUSTED (out of space)", err)
	}
	if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "volume", "-r", "tank"); len(got) != 0 {
		t.Fatalf("a failed create left %v", got)
	}
	if _, err := d.CreateVolume(ctx, createReq("pvc-small", 256<<20)); err != nil {
		t.Fatal(err)
	}
	_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-small", CapacityRange: &csi.CapacityRange{RequiredBytes: 8 << 30}})
	if status.Code(err) != codes.OutOfRange {
		t.Fatalf("expanding past the pool: %v, want OUT_OF_RANGE", err)
	}
}

func TestDeleteVolumeWithClones(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, ""))
	if _, err := d.CreateVolume(ctx, createReq("pvc-src", 1<<30)); err != nil {
		t.Fatal(err)
	}
	clone := createReq("pvc-clone", 1<<30)
	clone.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "pvc-src"}}}
	if _, err := d.CreateVolume(ctx, clone); err != nil {
		t.Fatal(err)
	}
	_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-src"})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "pvc-clone") {
		t.Fatalf("deleting a volume with a clone: %v, want FAILED_PRECONDITION naming the clone", err)
	}
	if got := zfsLines(t, h, "get", "-H", "-o", "value", "sharenfs", "tank/k8s/v/pvc-src"); len(got) != 1 || got[0] != "rw,no_subtree_check,no_root_squash" {
		t.Fatalf("the refused delete touched the share: sharenfs=%v", got)
	}
	for _, id := range []string{"pvc-clone", "pvc-src"} {
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "all", "-r", "tank/k8s/v"); len(got) != 1 {
		t.Fatalf("left behind: %v", got)
	}
}

// targetcli and nvmetcli have no locking: concurrent creates must reach
// the host one at a time.
func TestShareCLIsAreSerialisedPerHost(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	iscsi := newDriver(t, genericConfig(h, zfsgeneric.DriverISCSI, ""))
	nvme := newDriver(t, h.DriverConfig(zfsgeneric.DriverNVMeoF, "n", ""))
	errs := make(chan error, 32)
	for i := 0; i < 16; i++ {
		go func() { _, err := iscsi.CreateVolume(ctx, createReq(fmt.Sprintf("pvc-i%d", i), 1<<30)); errs <- err }()
		go func() { _, err := nvme.CreateVolume(ctx, createReq(fmt.Sprintf("pvc-n%d", i), 1<<30)); errs <- err }()
	}
	for i := 0; i < 32; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := h.Server.Stats()
	if st.TargetcliRuns < 16 || st.NvmetcliRuns < 16 || st.TargetcliOverlaps != 0 || st.NvmetcliOverlaps != 0 {
		t.Fatalf("stats %+v: want ≥16 runs each and no overlaps", st)
	}
	if n := len(h.Server.LIO().Targets); n != 16 {
		t.Fatalf("%d iSCSI targets", n)
	}
}

// A target the host refuses (here: a basename that is no IQN) fails the
// create with the tool's message and leaves no dataset behind.
func TestRefusedShareRollsBack(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, strings.Replace(genericConfig(h, zfsgeneric.DriverISCSI, ""), "iqn.2003-01.org.linux-iscsi.lab", "not-an-iqn", 1))
	_, err := d.CreateVolume(ctx, createReq("pvc-1", 1<<30))
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "targetcli") {
		t.Fatalf("create with a bad IQN: %v", err)
	}
	if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "volume", "-r", "tank"); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
	if lio := h.Server.LIO(); len(lio.Targets)+len(lio.StorageObjects) != 0 {
		t.Fatalf("LIO left behind: %+v", lio)
	}
}
