package zfsgeneric_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/crypto/ssh"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// The names the lab host's config (zfshost.DriverConfig) gives targets.
const (
	labIQNBase = "iqn.2003-01.org.linux-iscsi.lab"
	labNQNBase = "nqn.2003-01.org.linux-nvme.lab"
)

// hostRun runs a command line on the simulated host over SSH, as an
// administrator at the host's shell would, and fails the test unless it
// exits 0.
func hostRun(t *testing.T, h *zfshost.Host, line string) string {
	t.Helper()
	c, err := ssh.Dial("tcp", h.Addr, &ssh.ClientConfig{User: h.User, Auth: []ssh.AuthMethod{ssh.Password(h.Password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.CombinedOutput(line)
	if err != nil {
		t.Fatalf("%s on the host: %v: %s", line, err, out)
	}
	return string(out)
}

func healthOf(t *testing.T, d backend.Driver, id string) []*csi.VolumeHealth_VolumeHealthEntry {
	t.Helper()
	r, err := d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: id})
	if err != nil {
		t.Fatalf("ControllerGetVolumeHealth(%s): %v", id, err)
	}
	return r.GetVolumeHealth().GetHealthStatuses()
}

func newVolume(t *testing.T, d backend.Driver, name string) string {
	t.Helper()
	v, err := d.CreateVolume(ctx, createReq(name, 16<<20))
	if err != nil {
		t.Fatal(err)
	}
	return v.GetVolume().GetVolumeId()
}

// shareMissing checks for exactly one INACCESSIBLE/ShareMissing entry
// whose message holds every one of words.
func shareMissing(t *testing.T, what string, e []*csi.VolumeHealth_VolumeHealthEntry, words ...string) {
	t.Helper()
	if len(e) != 1 || e[0].GetStatus() != csi.VolumeHealthErrorType_INACCESSIBLE || e[0].GetReason() != "ShareMissing" {
		t.Fatalf("%s: want one INACCESSIBLE/ShareMissing entry, got %v", what, e)
	}
	for _, w := range words {
		if !strings.Contains(e[0].GetMessage(), w) {
			t.Errorf("%s: the message %q does not name %q", what, e[0].GetMessage(), w)
		}
	}
}

// A zfs-generic iSCSI or NVMe-oF volume is healthy while its target (LUN)
// or subsystem (namespace, port link) is there; each object removed on the
// host behind the driver's back (targetcli, nvmetcli) is
// INACCESSIBLE/ShareMissing naming it and the dataset.
func TestBlockShareHealth(t *testing.T) {
	defer zfsgeneric.SetTargetListingTTL(0)() // every check sees the host as it is now
	type removal struct {
		name  string
		line  func(id string) string // run on the host
		words func(id string) []string
	}
	for _, c := range []struct {
		driver   string
		removals []removal
	}{
		{zfsgeneric.DriverISCSI, []removal{
			{"target", func(id string) string { return "targetcli /iscsi delete " + labIQNBase + ":" + id },
				func(id string) []string { return []string{labIQNBase + ":" + id, "is gone"} }},
			{"LUN", func(id string) string { return "targetcli /iscsi/" + labIQNBase + ":" + id + "/tpg1/luns delete lun0" },
				func(id string) []string { return []string{labIQNBase + ":" + id, "has no LUN 0"} }},
			// Deleting a backstore takes its LUNs along.
			{"backstore", func(id string) string { return "targetcli /backstores/block delete " + id },
				func(id string) []string { return []string{labIQNBase + ":" + id, "has no LUN 0", "block/" + id} }},
		}},
		{zfsgeneric.DriverNVMeoF, []removal{
			{"subsystem", func(id string) string {
				nqn := labNQNBase + ":" + id
				return "nvmetcli /ports/1/subsystems delete " + nqn + " && nvmetcli /subsystems delete " + nqn
			}, func(id string) []string { return []string{labNQNBase + ":" + id, "is gone"} }},
			{"namespace", func(id string) string {
				return "nvmetcli /subsystems/" + labNQNBase + ":" + id + "/namespaces delete 1"
			},
				func(id string) []string { return []string{labNQNBase + ":" + id, "has no namespace 1"} }},
			{"port link", func(id string) string { return "nvmetcli /ports/1/subsystems delete " + labNQNBase + ":" + id },
				func(id string) []string { return []string{labNQNBase + ":" + id, "is not linked to port 1"} }},
		}},
	} {
		t.Run(c.driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, c.driver, ""))
			var ids []string
			for _, r := range c.removals {
				ids = append(ids, newVolume(t, d, "pvc-"+strings.ReplaceAll(strings.ToLower(r.name), " ", "-")))
			}
			for _, id := range ids {
				if e := healthOf(t, d, id); len(e) != 0 {
					t.Fatalf("%s, everything in place: %v", id, e)
				}
			}
			for i, r := range c.removals {
				hostRun(t, h, r.line(ids[i]))
				shareMissing(t, r.name+" removed", healthOf(t, d, ids[i]), append(r.words(ids[i]), "tank/k8s/v/"+ids[i])...)
				for _, other := range ids[i+1:] {
					if e := healthOf(t, d, other); len(e) != 0 {
						t.Errorf("%s removed from %s: %s reported %v", r.name, ids[i], other, e)
					}
				}
			}
		})
	}
}

// Checking every volume of a page costs one listing of the host's targets,
// not one targetcli/nvmetcli run per volume: ControllerListVolumeHealth
// over five volumes, and the CSI 1.12 condition's ControllerGetVolumeHealth
// per listed volume right after. A missing object is listed once more, by
// a run started after its check began, before it is reported.
func TestBlockShareHealthOneListingPerPage(t *testing.T) {
	const n = 5
	for _, driver := range []string{zfsgeneric.DriverISCSI, zfsgeneric.DriverNVMeoF} {
		t.Run(driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, driver, ""))
			var ids []string
			for i := range n {
				ids = append(ids, newVolume(t, d, fmt.Sprintf("pvc-page-%d", i)))
			}
			runs := func() int64 {
				s := h.Server.Stats()
				return s.TargetcliRuns + s.NvmetcliRuns
			}
			list := func() map[string][]*csi.VolumeHealth_VolumeHealthEntry {
				t.Helper()
				r, err := d.ControllerListVolumeHealth(ctx, &csi.ControllerListVolumeHealthRequest{})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string][]*csi.VolumeHealth_VolumeHealthEntry{}
				for _, e := range r.GetEntries() {
					out[e.GetVolumeId()] = e.GetHealthStatuses()
				}
				if len(out) != n {
					t.Fatalf("listed %d volumes, want %d", len(out), n)
				}
				return out
			}

			before := runs()
			for id, e := range list() {
				if len(e) != 0 {
					t.Errorf("%s: %v", id, e)
				}
			}
			for _, id := range ids { // the CSI 1.12 condition: one health call per listed volume
				if e := healthOf(t, d, id); len(e) != 0 {
					t.Errorf("%s: %v", id, e)
				}
			}
			if got := runs() - before; got != 1 {
				t.Errorf("a list and %d single checks of healthy volumes ran the target CLI %d times, want 1", n, got)
			}

			// A listing started after the removal is needed to see it (at
			// most targetListingTTL later); here the cache is dropped by
			// letting it age.
			restore := zfsgeneric.SetTargetListingTTL(0)
			gone := ids[2]
			if driver == zfsgeneric.DriverISCSI {
				hostRun(t, h, "targetcli /iscsi delete "+labIQNBase+":"+gone)
			} else {
				hostRun(t, h, "nvmetcli /ports/1/subsystems delete "+labNQNBase+":"+gone)
			}
			if e := healthOf(t, d, ids[0]); len(e) != 0 { // a fresh listing, cached
				t.Fatalf("%s: %v", ids[0], e)
			}
			restore()
			before = runs()
			for id, e := range list() {
				if id == gone {
					shareMissing(t, "a page with one target removed", e, gone)
				} else if len(e) != 0 {
					t.Errorf("%s: %v", id, e)
				}
			}
			// The listing cached after the removal serves the four healthy
			// volumes; the removed one's problem is confirmed by one run
			// started after its check began (which serves the rest).
			if got := runs() - before; got != 1 {
				t.Errorf("a page with one removed target ran the target CLI %d times, want 1", got)
			}
		})
	}
}

// When the host or its target CLI cannot be reached, no object is
// reported missing. The engine's rule for NFS (share_health.go) holds for
// iSCSI and NVMe-oF: a host that does not answer fails the call (the
// dataset cannot be read: UNAVAILABLE/error, which the CSI 1.12 condition
// turns into "no condition"), and a share check that fails on an
// answering host is UNKNOWN_VOLUME_HEALTH_TYPE/ShareUnknown with the
// reason, never INACCESSIBLE/ShareMissing.
func TestBlockShareHealthHostUnreachable(t *testing.T) {
	defer zfsgeneric.SetTargetListingTTL(0)()
	for _, c := range []struct {
		driver, tool string
	}{
		{zfsgeneric.DriverNFS, "zfs"},
		{zfsgeneric.DriverISCSI, "targetcli"},
		{zfsgeneric.DriverNVMeoF, "nvmetcli"},
	} {
		t.Run(c.driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			// readyTimeout (democratic-csi's key, milliseconds) bounds the
			// reconnect attempts once the host is gone.
			d := newDriver(t, strings.Replace(genericConfig(h, c.driver, ""), "sshConnection:\n", "sshConnection:\n  readyTimeout: 500\n", 1))
			id := newVolume(t, d, "pvc-unreachable")

			if c.driver != zfsgeneric.DriverNFS {
				// The CLI fails on an answering host.
				h.Server.Faults().SetErrorRate(c.tool, 1)
				e := healthOf(t, d, id)
				h.Server.Faults().SetErrorRate(c.tool, 0)
				if len(e) != 1 || e[0].GetStatus() != csi.VolumeHealthErrorType_UNKNOWN_VOLUME_HEALTH_TYPE || e[0].GetReason() != "ShareUnknown" ||
					!strings.Contains(e[0].GetMessage(), c.tool) || !strings.Contains(e[0].GetMessage(), "injected fault") {
					t.Fatalf("%s failing: want one UNKNOWN/ShareUnknown entry naming %s and its output, got %v", c.tool, c.tool, e)
				}
			}
			if c.driver == zfsgeneric.DriverNVMeoF {
				// nvmet's saved config not restored yet (a driver whose
				// configIsImportedFilePath is not there): every subsystem
				// would look gone; the check says why it cannot tell.
				const flag = "/var/run/nvmet-config-restored"
				cfg := strings.Replace(genericConfig(h, c.driver, ""), "/var/run/nvmet-config-loaded", flag, 1)
				e := healthOf(t, newDriver(t, cfg), id)
				if len(e) != 1 || e[0].GetReason() != "ShareUnknown" || !strings.Contains(e[0].GetMessage(), flag) {
					t.Fatalf("nvmet config not imported: %v", e)
				}
			}
			if e := healthOf(t, d, id); len(e) != 0 {
				t.Fatalf("the host back: %v", e)
			}

			// The host does not answer at all.
			if err := h.Server.Close(); err != nil {
				t.Fatal(err)
			}
			// The first call may be the one that finds the idle shell
			// session dead (UNAVAILABLE, "the shell session ended"): the
			// monitor asks again, and that call must name the refusal.
			r, err := d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: id})
			if status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "shell session ended") {
				r, err = d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: id})
			}
			if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "connection refused") {
				t.Fatalf("host down: ControllerGetVolumeHealth answered %v, %v; want UNAVAILABLE naming the refused connection", r, err)
			}
			if lr, err := d.ControllerListVolumeHealth(ctx, &csi.ControllerListVolumeHealthRequest{}); err == nil {
				t.Fatalf("host down: ControllerListVolumeHealth answered %v", lr)
			}
		})
	}
}
