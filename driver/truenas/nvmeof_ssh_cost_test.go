package truenas_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// TestNVMeoFOverSSHCallsPerVolume holds the backend calls of one
// freenas-nvmeof CreateVolume and DeleteVolume, by middleware method, once
// the driver is warm (logged in, release probed): the subsystem a create
// makes has no port links, so it does not list them (a list of every
// volume's links, docs/backends/truenas-nvmeof-ssh.md "Cost").
func TestNVMeoFOverSSHCallsPerVolume(t *testing.T) {
	ctx := context.Background()
	h := startHost(t, truenashost.Options{Version: "25.10", SSH: true})
	d := newDriver(t, h.DriverConfig("freenas-nvmeof", "vols", ""))
	h.Server.SSHFaults().SetLatency("", 1)
	if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	count := func(op func(i int)) (map[string]int, int64) {
		h.Server.ResetCalls()
		ssh0 := h.Server.SSHFaults().Counts().Delayed
		for i := 0; i < 10; i++ {
			op(i)
		}
		m := map[string]int{}
		for _, r := range h.Server.Calls() {
			m[r.Method]++
		}
		return m, h.Server.SSHFaults().Counts().Delayed - ssh0
	}
	ids := make([]string, 10)
	creates, sshC := count(func(i int) {
		r, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), VolumeCapabilities: caps(true),
			CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = r.GetVolume().GetVolumeId()
	})
	deletes, sshD := count(func(i int) {
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: ids[i]}); err != nil {
			t.Fatal(err)
		}
	})
	for _, p := range []struct {
		name string
		m    map[string]int
		ssh  int64
	}{{"create", creates, sshC}, {"delete", deletes, sshD}} {
		var keys []string
		for k := range p.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("%s: %s %.1f", p.name, k, float64(p.m[k])/10)
		}
		t.Logf("%s: ssh commands %.1f", p.name, float64(p.ssh)/10)
	}
	// system.version, auth.login_ex and core.set_options come now and then
	// (the release's re-probe, a second connection), not per volume.
	for _, m := range []string{"nvmet.subsys.create", "nvmet.namespace.create", "nvmet.port.query", "nvmet.port_subsys.create"} {
		if creates[m] != 10 {
			t.Errorf("%s: %d calls for 10 creates, want 10", m, creates[m])
		}
	}
	if n := creates["nvmet.port_subsys.query"]; n != 0 {
		t.Errorf("nvmet.port_subsys.query: %d calls for 10 creates of fresh subsystems, want 0", n)
	}
	if sshC != 20 || sshD != 20 {
		t.Errorf("zfs commands over SSH: %d for 10 creates and %d for 10 deletes, want 20 and 20", sshC, sshD)
	}
	if n := deletes["nvmet.subsys.delete"] + deletes["nvmet.subsys.get_instance"]; n != 20 || len(deletes) != 2 {
		t.Errorf("deletes made %v, want nvmet.subsys.get_instance and nvmet.subsys.delete once each per volume", deletes)
	}
}

// TestNVMeoFOverSSHRetryLinks: a create cut short after its subsystem was
// made (the port link failed) is completed by the retry, which finds the
// subsystem, lists the links and makes the missing one: one link, not two.
func TestNVMeoFOverSSHRetryLinks(t *testing.T) {
	ctx := context.Background()
	h := startHost(t, truenashost.Options{Version: "25.10", SSH: true})
	d := newDriver(t, h.DriverConfig("freenas-nvmeof", "vols", ""))
	req := &csi.CreateVolumeRequest{Name: "pvc-retry", VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}}
	h.Server.Faults().SetErrorRate("nvmet.port_subsys.create", 1)
	if _, err := d.CreateVolume(ctx, req); err == nil {
		t.Fatal("create succeeded while nvmet.port_subsys.create failed")
	}
	left := h.Server.Sharing().State()
	h.Server.Faults().Reset()
	h.Server.ResetCalls()
	vol, err := d.CreateVolume(ctx, req)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	listed := false
	for _, c := range h.Server.Calls() {
		listed = listed || c.Method == "nvmet.port_subsys.query"
	}
	if len(left.NVMetSubsystems) == 1 && !listed {
		t.Error("the retry found the subsystem an earlier call made but did not list its port links")
	}
	t.Logf("left by the failed create: %d subsystems, %d links; the retry listed links: %v", len(left.NVMetSubsystems), len(left.NVMetPortSubsys), listed)
	st := h.Server.Sharing().State()
	if len(st.NVMetSubsystems) != 1 || len(st.NVMetPortSubsys) != 1 {
		t.Fatalf("after the retry: %d subsystems and %d port links, want 1 and 1", len(st.NVMetSubsystems), len(st.NVMetPortSubsys))
	}
	if st.NVMetPortSubsys[0].SubsysID != st.NVMetSubsystems[0].ID {
		t.Errorf("the link %+v is not to the subsystem %+v", st.NVMetPortSubsys[0], st.NVMetSubsystems[0])
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if n := shareObjects(h); n != 0 {
		t.Errorf("%d share objects left: %+v", n, h.Server.Sharing().State())
	}
}
