package truenas_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// TestNVMeoFNextKeys: democratic-csi next's nvmeof keys work on the API and
// SSH drivers: ports (its name for portIds) picks the nvmet ports linked,
// nameTemplate/namePrefix name the subsystem (lower-cased), and
// subsystemTemplate / namespaceTemplate reach nvmet.subsys.create and
// nvmet.namespace.create.
func TestNVMeoFNextKeys(t *testing.T) {
	for _, driver := range []string{"freenas-api-nvmeof", "freenas-nvmeof"} {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			h := startHost(t, truenashost.Options{Version: "25.10", SSH: true})
			ports, err := h.Query("nvmet.port.query")
			if err != nil || len(ports) != 1 {
				t.Fatalf("nvmet ports %v, %v: want the lab's one", ports, err)
			}
			portID := int(ports[0]["id"].(float64))

			// A port that does not exist: refused, which shows ports is read
			// (without it every TCP port is linked and the create succeeds).
			d := newDriver(t, h.DriverConfig(driver, "vols", "")+"  ports: [99]\n")
			_, err = d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-0", VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err == nil || !strings.Contains(err.Error(), "99") {
				t.Fatalf("nvmeof.ports [99]: got %v, want an error naming port 99", err)
			}

			d = newDriver(t, h.DriverConfig(driver, "vols", "")+`  ports: [`+strconv.Itoa(portID)+`]
  nameTemplate: "{{ parameters.team }}-{{ name }}"
  namePrefix: CSI-
  subsystemTemplate:
    qid_max: 8
  namespaceTemplate:
    nsid: 7
`)
			vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", Parameters: map[string]string{"team": "Blue"},
				VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			subs, _ := h.Query("nvmet.subsys.query")
			var sub map[string]any
			for _, s := range subs {
				if s["name"] == "csi-blue-pvc-1" {
					sub = s
				}
			}
			if sub == nil || sub["qid_max"] != float64(8) {
				t.Fatalf("subsystems %v: want csi-blue-pvc-1 with qid_max 8", subs)
			}
			if vc := vol.GetVolume().GetVolumeContext(); vc["nsid"] != "7" || !strings.HasSuffix(vc["nqn"], ":csi-blue-pvc-1") {
				t.Fatalf("volume_context %v: want nsid 7 and the templated name in the NQN", vc)
			}
			st := h.Server.Sharing().State()
			if len(st.NVMetPortSubsys) != 1 || st.NVMetPortSubsys[0].PortID != portID {
				t.Fatalf("port links %+v: want one to port %d", st.NVMetPortSubsys, portID)
			}
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNVMeoFNextKeyProblems: the aliases' mistakes are config problems
// naming the key.
func TestNVMeoFNextKeyProblems(t *testing.T) {
	ty, ok := backend.Lookup("freenas-api-nvmeof")
	if !ok {
		t.Fatal("freenas-api-nvmeof is not registered")
	}
	base := func(nvmeof map[string]any) config.Tree {
		nvmeof["transports"] = []any{"tcp://10.0.0.5:4420"}
		return config.Tree{"driver": "freenas-api-nvmeof", "httpConnection": map[string]any{"host": "nas", "apiKey": "k"},
			"zfs": map[string]any{"datasetParentName": "tank/v"}, "nvmeof": nvmeof}
	}
	for _, c := range []struct {
		nvmeof  map[string]any
		key     string
		mention string
	}{
		{map[string]any{"ports": []any{1}, "portIds": []any{2}}, "nvmeof.ports", "set one of them"},
		{map[string]any{"ports": []any{"x"}}, "nvmeof.ports", `"x"`},
		{map[string]any{"subsystemTemplate": "qid_max=8"}, "nvmeof.subsystemTemplate", "map"},
		{map[string]any{"subsystemTemplate": map[string]any{"name": "fixed"}}, "nvmeof.subsystemTemplate.name", "set by switchyard"},
		{map[string]any{"namespaceTemplate": map[string]any{"device_path": "zvol/x"}}, "nvmeof.namespaceTemplate.device_path", "set by switchyard"},
	} {
		ps := ty.Validate(base(c.nvmeof))
		found := false
		for _, p := range ps {
			found = found || p.Key == c.key && strings.Contains(p.Msg, c.mention)
		}
		if !found {
			t.Errorf("%v: problems %v, want one for %s mentioning %q", c.nvmeof, ps, c.key, c.mention)
		}
	}
	if ps := ty.Validate(base(map[string]any{"ports": []any{1}, "subsystemTemplate": map[string]any{"qid_max": 8}})); len(ps) != 0 {
		t.Errorf("democratic-csi next's keys: problems %v", ps)
	}
}
