package zfsgeneric_test

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// allowList turns a lab config's open target (generate_node_acls: 1,
// allow_any_host: 1) into hostAccess: allowList.
func allowList(cfg, section string) string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		if strings.Contains(l, "generate_node_acls: 1") || strings.Contains(l, "allow_any_host: 1") {
			continue
		}
		out = append(out, l)
		if l == section+":" {
			out = append(out, "  hostAccess: allowList")
		}
	}
	return strings.Join(out, "\n")
}

// newAccessDriver builds a driver whose node ids carry IQN and NQN parts,
// as behind a proxy with proxy.nodeId.parts.iqn/nqn.
func newAccessDriver(t *testing.T, yaml string) backend.Driver {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	d, err := zfsgeneric.New(backend.Options{File: "test.yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ParseNodeID: nodeid.Parser(nodeid.Settings{NodeName: true, IQN: true, NQN: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func advertisesPublish(t *testing.T, d backend.Driver) bool {
	t.Helper()
	resp, err := d.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.GetCapabilities() {
		if c.GetRpc().GetType() == csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME {
			return true
		}
	}
	return false
}

// accessCase is one protocol: its config section, the node ids of two
// nodes and the names the target must list, and how to read the
// target's allow-list and openness from the simulator.
type accessCase struct {
	driver, section string
	nodeA, nodeB    string
	nameA, nameB    string
	granted         func(h *zfshost.Host) (names []string, open string, exists bool)
}

var accessCases = []accessCase{
	{
		driver: zfsgeneric.DriverISCSI, section: "iscsi",
		nodeA: "n=a/i=iqn.2005-03.org.open-iscsi:Node-A", nodeB: "n=b/i=iqn.2005-03.org.open-iscsi:node-b",
		nameA: "iqn.2005-03.org.open-iscsi:node-a", nameB: "iqn.2005-03.org.open-iscsi:node-b",
		granted: func(h *zfshost.Host) ([]string, string, bool) {
			for _, tg := range h.Server.LIO().Targets {
				for _, tpg := range tg.TPGs {
					var names []string
					for _, a := range tpg.NodeACLs {
						if len(a.MappedLUNs) != 1 || a.MappedLUNs[0].TPGLUN != 0 {
							names = append(names, a.WWN+"(no LUN 0)")
							continue
						}
						names = append(names, a.WWN)
					}
					return names, tpg.Attributes["generate_node_acls"], true
				}
			}
			return nil, "", false
		},
	},
	{
		driver: zfsgeneric.DriverNVMeoF, section: "nvmeof",
		nodeA: "n=a/v=nqn.2014-08.org.nvmexpress:uuid:aaaa", nodeB: "n=b/v=nqn.2014-08.org.nvmexpress:uuid:bbbb",
		nameA: "nqn.2014-08.org.nvmexpress:uuid:aaaa", nameB: "nqn.2014-08.org.nvmexpress:uuid:bbbb",
		granted: func(h *zfshost.Host) ([]string, string, bool) {
			st := h.Server.NVMet()
			if len(st.Subsystems) == 0 {
				return nil, "", false
			}
			s := st.Subsystems[0] // the test's one volume
			for _, a := range s.AllowedHosts {
				if !slices.Contains(st.Hosts, a) {
					return []string{a + "(not under /hosts)"}, "", true
				}
			}
			return s.AllowedHosts, s.Attr["allow_any_host"], true
		},
	},
}

// TestHostAccess: with hostAccess: allowList the target is made closed,
// publish grants exactly the node (idempotently), a second node gets its
// own grant, unpublish withdraws one node or (empty node id) all,
// repeats are fine, and delete takes the target with its grants.
func TestHostAccess(t *testing.T) {
	for _, c := range accessCases {
		t.Run(c.section, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newAccessDriver(t, allowList(genericConfig(h, c.driver, ""), c.section))
			if !advertisesPublish(t, d) {
				t.Fatal("PUBLISH_UNPUBLISH_VOLUME is not advertised")
			}
			resp, err := d.CreateVolume(ctx, createReq("pvc-1", 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			id := resp.GetVolume().GetVolumeId()
			check := func(step string, want ...string) {
				t.Helper()
				names, open, ok := c.granted(h)
				if !ok {
					t.Fatalf("%s: the target is gone", step)
				}
				if open != "0" {
					t.Errorf("%s: the target admits everyone (%q)", step, open)
				}
				if !slices.Equal(names, want) {
					t.Errorf("%s: allowed %v, want %v", step, names, want)
				}
			}
			check("created")
			pub := func(node string) {
				t.Helper()
				r, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: node, VolumeCapability: mountCaps()[0]})
				if err != nil {
					t.Fatalf("publish to %s: %v", node, err)
				}
				if len(r.GetPublishContext()) != 0 {
					t.Errorf("publish_context %v: the volume_context has everything", r.GetPublishContext())
				}
			}
			unpub := func(node string) {
				t.Helper()
				if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: node}); err != nil {
					t.Fatalf("unpublish from %q: %v", node, err)
				}
			}
			pub(c.nodeA)
			pub(c.nodeA)
			check("published to a twice", c.nameA)
			pub(c.nodeB)
			check("published to b", c.nameA, c.nameB)
			unpub(c.nodeA)
			unpub(c.nodeA)
			check("unpublished from a twice", c.nameB)
			pub(c.nodeA)
			unpub("")
			check("unpublished from every node")
			unpub("")
			pub(c.nodeB)

			// A node id without the part: FAILED_PRECONDITION naming the fix.
			_, err = d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: "n=c", VolumeCapability: mountCaps()[0]})
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "proxy.nodeId.parts.") {
				t.Errorf("node id without the initiator: %v", err)
			}
			check("refused node c", c.nameB)

			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
				t.Fatal(err)
			}
			if names, _, ok := c.granted(h); ok {
				t.Errorf("delete left the target with %v", names)
			}
			unpub(c.nodeB)
			if _, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: c.nodeA, VolumeCapability: mountCaps()[0]}); status.Code(err) != codes.NotFound {
				t.Errorf("publish of a deleted volume: %v", err)
			}
		})
	}
}

// TestHostAccessOpen: without hostAccess (democratic-csi's configs) the
// target stays open and there is no publish step.
func TestHostAccessOpen(t *testing.T) {
	for _, c := range accessCases {
		t.Run(c.section, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newAccessDriver(t, genericConfig(h, c.driver, ""))
			if advertisesPublish(t, d) {
				t.Error("PUBLISH_UNPUBLISH_VOLUME advertised for open targets")
			}
			resp, err := d.CreateVolume(ctx, createReq("pvc-1", 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			if names, open, _ := c.granted(h); open != "1" || len(names) != 0 {
				t.Errorf("open target: allowed %v, open %q", names, open)
			}
			_, err = d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId(), NodeId: c.nodeA, VolumeCapability: mountCaps()[0]})
			// The engine answers publish on open targets too (it loads
			// an encryption key when one is needed) but grants nothing.
			if err != nil {
				t.Errorf("publish: %v", err)
			}
			if names, open, _ := c.granted(h); open != "1" || len(names) != 0 {
				t.Errorf("open target after publish: allowed %v, open %q", names, open)
			}
		})
	}
}

// TestHostAccessConfig: the key's values, and the democratic-csi
// attributes that contradict it.
func TestHostAccessConfig(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	for _, tc := range []struct {
		name, cfg, want string
	}{
		{"bad value", strings.Replace(genericConfig(h, zfsgeneric.DriverISCSI, ""), "iscsi:\n", "iscsi:\n  hostAccess: everyone\n", 1), "iscsi.hostAccess: must be open"},
		{"iscsi open attribute", strings.Replace(genericConfig(h, zfsgeneric.DriverISCSI, ""), "iscsi:\n", "iscsi:\n  hostAccess: allowList\n", 1), "generate_node_acls: is 1"},
		{"nvmeof open attribute", strings.Replace(genericConfig(h, zfsgeneric.DriverNVMeoF, ""), "nvmeof:\n", "nvmeof:\n  hostAccess: allowList\n", 1), "allow_any_host: is 1"},
		{"open is fine", strings.Replace(genericConfig(h, zfsgeneric.DriverNVMeoF, ""), "nvmeof:\n", "nvmeof:\n  hostAccess: open\n", 1), ""},
	} {
		tree, err := config.Parse([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		ps := zfsgeneric.Validate(tree)
		got := config.Problems(ps).Error()
		if len(ps) == 0 {
			got = ""
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
