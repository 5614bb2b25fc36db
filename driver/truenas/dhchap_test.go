package truenas_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// dhchapKey makes a key as nvme gen-dhchap-key -m 1 prints it.
func dhchapKey(fill byte) string {
	secret := bytes.Repeat([]byte{fill}, 32)
	b := binary.LittleEndian.AppendUint32(secret, crc32.ChecksumIEEE(secret))
	return "DHHC-1:01:" + base64.StdEncoding.EncodeToString(b) + ":"
}

// TestDHCHAPNVMe: with nvmeof.dhchap, volume_context says the target
// requires authentication (without the keys) and publish gives the
// nvmet.host the connection's keys: when it makes the host, and when the
// host exists already (made by a grant of another volume).
func TestDHCHAPNVMe(t *testing.T) {
	const node, nqn = "n=a/v=nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000a", "nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000a"
	hostKey, ctrlKey := dhchapKey('h'), dhchapKey('c')
	ctx := context.Background()
	h := startHost(t, truenashost.Options{Version: "25.10"})
	base := strings.Replace(h.DriverConfig("freenas-api-nvmeof", "vols", ""), "nvmeof:\n", "nvmeof:\n  hostAccess: allowList\n", 1)
	keyed := strings.Replace(base, "nvmeof:\n", "nvmeof:\n  dhchap:\n    hostKey: '"+hostKey+"'\n    ctrlKey: '"+ctrlKey+"'\n", 1)

	// A connection without DH-CHAP grants the host first (no keys).
	plain := newNodeIDDriver(t, base)
	v0, err := plain.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-0", VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v0.GetVolume().GetVolumeId(), NodeId: node, VolumeCapability: caps(true)[0]}); err != nil {
		t.Fatal(err)
	}

	d := newNodeIDDriver(t, keyed)
	v, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	vc := v.GetVolume().GetVolumeContext()
	if vc["dhchap"] != "required" {
		t.Errorf("volume_context %v: want dhchap: required", vc)
	}
	if strings.Contains(fmt.Sprint(vc), "DHHC") {
		t.Errorf("volume_context carries a key: %v", vc)
	}
	if _, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolume().GetVolumeId(), NodeId: node, VolumeCapability: caps(true)[0]}); err != nil {
		t.Fatal(err)
	}
	hosts, err := h.Query("nvmet.host.query")
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0]["hostnqn"] != nqn || hosts[0]["dhchap_key"] != hostKey || hosts[0]["dhchap_ctrl_key"] != ctrlKey {
		t.Errorf("nvmet.host %v: want %s with the connection's keys", hosts, nqn)
	}
	_, granted, _ := nvmeGrants(t, h)
	if n := len(granted); n != 2 {
		t.Errorf("grants %v: want both subsystems", granted)
	}
}

// TestDHCHAPNVMeConfig: a malformed key is a problem naming the key,
// never quoting it.
func TestDHCHAPNVMeConfig(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10"})
	bad := "DHHC-1:01:c2VjcmV0LXZhbHVl:"
	cfg := strings.Replace(h.DriverConfig("freenas-api-nvmeof", "v", ""), "nvmeof:\n", "nvmeof:\n  hostAccess: allowList\n  dhchap:\n    hostKey: '"+bad+"'\n", 1)
	tree, err := config.Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ty, _ := backend.Lookup("freenas-api-nvmeof")
	got := config.Problems(ty.Validate(tree)).Error()
	if !strings.Contains(got, "nvmeof.dhchap.hostKey: is not a DH-HMAC-CHAP key") || strings.Contains(got, "c2VjcmV0") {
		t.Errorf("problems %q", got)
	}
}
