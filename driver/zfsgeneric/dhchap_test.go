package zfsgeneric_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// dhchapKey makes a key as nvme gen-dhchap-key -m 1 prints it.
func dhchapKey(fill byte) string {
	secret := bytes.Repeat([]byte{fill}, 32)
	b := binary.LittleEndian.AppendUint32(secret, crc32.ChecksumIEEE(secret))
	return "DHHC-1:01:" + base64.StdEncoding.EncodeToString(b) + ":"
}

func withDHCHAP(cfg, hostKey, ctrlKey string) string {
	add := "  dhchap:\n    hostKey: '" + hostKey + "'\n"
	if ctrlKey != "" {
		add += "    ctrlKey: '" + ctrlKey + "'\n"
	}
	return strings.Replace(cfg, "nvmeof:\n  hostAccess: allowList\n", "nvmeof:\n  hostAccess: allowList\n"+add, 1)
}

// TestDHCHAP: with nvmeof.dhchap the volume_context says the target
// requires authentication (without the keys), publish writes the keys
// into the host's configfs entry before linking it, a repeat rewrites
// them, and no key reaches the log.
func TestDHCHAP(t *testing.T) {
	hostKey, ctrlKey := dhchapKey('h'), dhchapKey('c')
	h := startHost(t, zfshost.Options{})
	var logs bytes.Buffer
	tree, err := config.Parse([]byte(withDHCHAP(allowList(genericConfig(h, zfsgeneric.DriverNVMeoF, ""), "nvmeof"), hostKey, ctrlKey)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := zfsgeneric.New(backend.Options{File: "test.yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ParseNodeID: nodeid.Parser(nodeid.Settings{NodeName: true, NQN: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	resp, err := d.CreateVolume(ctx, createReq("pvc-1", 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	vc := resp.GetVolume().GetVolumeContext()
	if vc["dhchap"] != "required" {
		t.Errorf("volume_context %v: want dhchap: required", vc)
	}
	const node, nqn = "n=a/v=nqn.2014-08.org.nvmexpress:uuid:aaaa", "nqn.2014-08.org.nvmexpress:uuid:aaaa"
	for i := range 2 {
		r, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId(), NodeId: node, VolumeCapability: mountCaps()[0]})
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		for k, v := range r.GetPublishContext() {
			if strings.Contains(v, "DHHC") {
				t.Errorf("publish_context %s carries a key", k)
			}
		}
	}
	st := h.Server.NVMet()
	if a := st.HostAuth[nqn]; a.Key != hostKey || a.CtrlKey != ctrlKey {
		t.Errorf("host %s: configfs keys %+v, want the connection's", nqn, a)
	}
	if len(st.Subsystems) != 1 || len(st.Subsystems[0].AllowedHosts) != 1 || st.Subsystems[0].AllowedHosts[0] != nqn {
		t.Errorf("subsystems %+v: want %s allowed", st.Subsystems, nqn)
	}
	for _, k := range []string{hostKey, ctrlKey} {
		if strings.Contains(logs.String(), k) {
			t.Fatalf("a key reached the log:\n%s", logs.String())
		}
		for k2, v := range vc {
			if strings.Contains(v, k) {
				t.Errorf("volume_context %s carries a key", k2)
			}
		}
	}
}

// TestDHCHAPConfig: a malformed key is a problem naming the key, never
// quoting it; keys without the allow-list are refused.
func TestDHCHAPConfig(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	bad := strings.Replace(dhchapKey('x'), "DHHC-1:01:", "DHHC-1:02:", 1) // a SHA-384 key must be 48 bytes
	for _, tc := range []struct{ name, cfg, want string }{
		{"malformed", withDHCHAP(allowList(genericConfig(h, zfsgeneric.DriverNVMeoF, ""), "nvmeof"), bad, ""), "nvmeof.dhchap.hostKey: is not a DH-HMAC-CHAP key"},
		{"open targets", strings.Replace(genericConfig(h, zfsgeneric.DriverNVMeoF, ""), "nvmeof:\n", "nvmeof:\n  dhchap:\n    hostKey: '"+dhchapKey('h')+"'\n", 1), "nvmeof.dhchap: needs nvmeof.hostAccess: allowList"},
	} {
		tree, err := config.Parse([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		got := config.Problems(zfsgeneric.Validate(tree)).Error()
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if strings.Contains(got, "DHHC-1:") {
			t.Errorf("%s: the problem quotes the key: %q", tc.name, got)
		}
	}
}
