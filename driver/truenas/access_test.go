package truenas_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// newNodeIDDriver is newDriver with node ids that carry IQNs and NQNs, as
// behind a proxy with proxy.nodeId.parts.iqn and nqn.
func newNodeIDDriver(t *testing.T, yaml string) backend.Driver {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ty, _ := backend.Lookup(tree["driver"].(string))
	if ps := ty.Validate(tree); len(ps) > 0 {
		t.Fatalf("config problems: %v", ps)
	}
	d, err := ty.New(backend.Options{File: "test.yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ParseNodeID: nodeid.Parser(nodeid.Settings{NodeName: true, IQN: true, NQN: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// nvmeGrants reads the host: each subsystem's allow_any_host and granted
// host NQNs, and every nvmet.host.
func nvmeGrants(t *testing.T, h *truenashost.Host) (open map[string]bool, granted map[string][]string, hosts []string) {
	t.Helper()
	subs, err := h.Query("nvmet.subsys.query")
	if err != nil {
		t.Fatal(err)
	}
	open, granted = map[string]bool{}, map[string][]string{}
	names := map[string]string{}
	for _, s := range subs {
		open[s["name"].(string)] = s["allow_any_host"] == true
		names[fmt.Sprint(s["id"])] = s["name"].(string)
	}
	links, err := h.Query("nvmet.host_subsys.query")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		host, _ := l["host"].(map[string]any)
		sub, _ := l["subsys"].(map[string]any)
		name := names[fmt.Sprint(sub["id"])]
		granted[name] = append(granted[name], fmt.Sprint(host["hostnqn"]))
	}
	for k := range granted {
		sort.Strings(granted[k])
	}
	hs, err := h.Query("nvmet.host.query")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range hs {
		hosts = append(hosts, fmt.Sprint(x["hostnqn"]))
	}
	sort.Strings(hosts)
	return open, granted, hosts
}

// TestHostAccessNVMe: nvmeof.hostAccess: allowList makes subsystems
// closed; publish grants exactly the node (an nvmet.host and its
// host_subsys link), a second node its own, unpublish withdraws (and
// removes a host nothing links any more), repeats are fine, delete leaves
// no grant and no host behind; open connections keep allow_any_host.
func TestHostAccessNVMe(t *testing.T) {
	const (
		nodeA, nqnA = "n=a/v=nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000a", "nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000a"
		nodeB, nqnB = "n=b/v=nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000b", "nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000000b"
	)
	ctx := context.Background()
	h := startHost(t, truenashost.Options{Version: "25.10"})
	d := newNodeIDDriver(t, strings.Replace(h.DriverConfig("freenas-api-nvmeof", "vols", ""), "nvmeof:\n", "nvmeof:\n  hostAccess: allowList\n", 1))
	mk := func(name string) string {
		v, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
		if err != nil {
			t.Fatal(err)
		}
		return v.GetVolume().GetVolumeId()
	}
	v1, v2 := mk("pvc-1"), mk("pvc-2")
	pub := func(vol, node string) error {
		_, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: vol, NodeId: node, VolumeCapability: caps(true)[0]})
		return err
	}
	unpub := func(vol, node string) {
		t.Helper()
		if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: vol, NodeId: node}); err != nil {
			t.Fatalf("unpublish %s from %q: %v", vol, node, err)
		}
	}
	expect := func(step string, want map[string][]string, wantHosts ...string) {
		t.Helper()
		open, granted, hosts := nvmeGrants(t, h)
		for name, o := range open {
			if o {
				t.Errorf("%s: subsystem %s admits every host", step, name)
			}
		}
		for k, v := range want {
			if !slices.Equal(granted[k], v) {
				t.Errorf("%s: %s grants %v, want %v", step, k, granted[k], v)
			}
		}
		for k, v := range granted {
			if _, ok := want[k]; !ok && len(v) > 0 {
				t.Errorf("%s: %s grants %v, want none", step, k, v)
			}
		}
		if !slices.Equal(hosts, wantHosts) {
			t.Errorf("%s: nvmet.host %v, want %v", step, hosts, wantHosts)
		}
	}
	expect("created", nil)
	for range 2 {
		if err := pub(v1, nodeA); err != nil {
			t.Fatal(err)
		}
	}
	expect("v1 to a, twice", map[string][]string{"pvc-1": {nqnA}}, nqnA)
	for _, p := range [][2]string{{v1, nodeB}, {v2, nodeA}} {
		if err := pub(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	expect("v1 to b, v2 to a", map[string][]string{"pvc-1": {nqnA, nqnB}, "pvc-2": {nqnA}}, nqnA, nqnB)
	unpub(v1, nodeA)
	unpub(v1, nodeA)
	expect("v1 from a", map[string][]string{"pvc-1": {nqnB}, "pvc-2": {nqnA}}, nqnA, nqnB) // v2 still links a
	unpub(v1, "")
	expect("v1 from every node", map[string][]string{"pvc-2": {nqnA}}, nqnA) // b is linked nowhere: gone
	if err := pub(v1, nodeB); err != nil {
		t.Fatal(err)
	}
	if err := pub(v1, "n=c"); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "proxy.nodeId.parts.nqn") {
		t.Errorf("a node id without an NQN: %v", err)
	}
	if err := pub(v1, "some-fake-node-id"); status.Code(err) != codes.NotFound {
		t.Errorf("a node id of no node: %v", err)
	}
	for _, v := range []string{v1, v2} {
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v}); err != nil {
			t.Fatal(err)
		}
	}
	expect("deleted", nil)
	unpub(v1, nodeB)
	if err := pub(v1, nodeB); status.Code(err) != codes.NotFound {
		t.Errorf("publish of a deleted volume: %v", err)
	}

	// Open (the default): allow_any_host, no publish step.
	open := newNodeIDDriver(t, h.DriverConfig("freenas-api-nvmeof", "open", ""))
	v, err := open.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-3", VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if o, _, _ := nvmeGrants(t, h); !o["pvc-3"] {
		t.Error("an open connection's subsystem does not admit every host")
	}
	if _, err := open.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolume().GetVolumeId(), NodeId: nodeA, VolumeCapability: caps(true)[0]}); status.Code(err) != codes.Unimplemented {
		t.Errorf("publish on an open connection: %v", err)
	}
}

// TestHostAccessConfig: the key's values, allowAnyHost contradicting it,
// and an initiator group of the config's, which allowList manages itself.
func TestHostAccessConfig(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10"})
	for _, tc := range []struct{ name, cfg, want string }{
		{"bad value", strings.Replace(h.DriverConfig("freenas-api-nvmeof", "v", ""), "nvmeof:\n", "nvmeof:\n  hostAccess: closed\n", 1), "nvmeof.hostAccess: must be open"},
		{"allowAnyHost", strings.Replace(h.DriverConfig("freenas-api-nvmeof", "v", ""), "nvmeof:\n", "nvmeof:\n  hostAccess: allowList\n  allowAnyHost: true\n", 1), "nvmeof.allowAnyHost: is true"},
		{"iscsi", allowListISCSI(h, "freenas-api-iscsi", "v"), ""},
		{"iscsi initiator group", strings.Replace(h.DriverConfig("freenas-api-iscsi", "v", ""), "iscsi:\n", "iscsi:\n  hostAccess: allowList\n", 1), "targetGroups[0].targetGroupInitiatorGroup: is set"},
		{"open", strings.Replace(h.DriverConfig("freenas-api-nvmeof", "v", ""), "nvmeof:\n", "nvmeof:\n  hostAccess: open\n", 1), ""},
	} {
		tree, err := config.Parse([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		ty, _ := backend.Lookup(tree["driver"].(string))
		ps := config.Problems(ty.Validate(tree))
		got := ""
		if len(ps) > 0 {
			got = ps.Error()
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// allowListISCSI is a TrueNAS iSCSI config with hostAccess: allowList
// (without the lab's initiator group, which the driver then manages).
func allowListISCSI(h *truenashost.Host, driver, name string) string {
	cfg := strings.Replace(h.DriverConfig(driver, name, ""), "iscsi:\n", "iscsi:\n  hostAccess: allowList\n", 1)
	return strings.Replace(cfg, "      targetGroupInitiatorGroup: 1\n", "", 1)
}

// iscsiAccess reads the host: which IQNs each target admits ("*": every
// initiator; none: closed), and the comments of every initiator group.
func iscsiAccess(t *testing.T, h *truenashost.Host) (admits map[string][]string, groups []string) {
	t.Helper()
	igs, err := h.Query("iscsi.initiator.query")
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{}
	for _, g := range igs {
		var l []string
		for _, x := range g["initiators"].([]any) {
			l = append(l, x.(string))
		}
		lists[fmt.Sprint(g["id"])] = l
		groups = append(groups, fmt.Sprint(g["comment"]))
	}
	sort.Strings(groups)
	targets, err := h.Query("iscsi.target.query")
	if err != nil {
		t.Fatal(err)
	}
	admits = map[string][]string{}
	for _, tg := range targets {
		var in []string
		for _, g := range tg["groups"].([]any) {
			l := lists[fmt.Sprint(g.(map[string]any)["initiator"])]
			if len(l) == 0 {
				l = []string{"*"}
			}
			in = append(in, l...)
		}
		sort.Strings(in)
		admits[tg["name"].(string)] = slices.Compact(in)
	}
	return admits, groups
}

// TestHostAccessISCSI: iscsi.hostAccess: allowList makes targets without
// groups (nobody); publish gives the target the configured portal group
// naming an initiator group of its own with exactly the node's IQN, a
// second node is added to it, unpublish withdraws and the last one takes
// the groups off again and deletes the initiator group; repeats are fine,
// delete leaves no group behind; a target someone opened is refused; open
// connections keep their targets as configured.
func TestHostAccessISCSI(t *testing.T) {
	const (
		nodeA, iqnA = "n=a/i=iqn.2005-03.org.open-iscsi:Node-A", "iqn.2005-03.org.open-iscsi:node-a"
		nodeB, iqnB = "n=b/i=iqn.2005-03.org.open-iscsi:node-b", "iqn.2005-03.org.open-iscsi:node-b"
	)
	for _, tc := range []struct{ driver, version string }{{"freenas-api-iscsi", "25.10"}, {"freenas-iscsi", "25.04"}, {"freenas-api-iscsi", "24.10"}} {
		t.Run(tc.driver+"@"+tc.version, func(t *testing.T) {
			ctx := context.Background()
			h := startHost(t, truenashost.Options{Version: tc.version, SSH: true})
			_, baseline := iscsiAccess(t, h)
			d := newNodeIDDriver(t, allowListISCSI(h, tc.driver, "vols"))
			mk := func(d backend.Driver, name string) string {
				t.Helper()
				v, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: caps(true), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
				if err != nil {
					t.Fatal(err)
				}
				return v.GetVolume().GetVolumeId()
			}
			v1, v2 := mk(d, "pvc-1"), mk(d, "pvc-2")
			pub := func(vol, node string) error {
				_, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: vol, NodeId: node, VolumeCapability: caps(true)[0]})
				return err
			}
			unpub := func(vol, node string) {
				t.Helper()
				if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: vol, NodeId: node}); err != nil {
					t.Fatalf("unpublish %s from %q: %v", vol, node, err)
				}
			}
			expect := func(step string, want map[string][]string, wantGroups ...string) {
				t.Helper()
				admits, groups := iscsiAccess(t, h)
				for name, in := range admits {
					if !slices.Equal(in, want[name]) {
						t.Errorf("%s: target %s admits %q, want %q", step, name, in, want[name])
					}
				}
				if want := append(slices.Clone(baseline), wantGroups...); !slices.Equal(groups, slices.Sorted(slices.Values(want))) {
					t.Errorf("%s: initiator groups %q, want %q", step, groups, want)
				}
			}
			expect("created", nil)
			for range 2 {
				if err := pub(v1, nodeA); err != nil {
					t.Fatal(err)
				}
			}
			expect("v1 to a, twice", map[string][]string{"pvc-1": {iqnA}}, "switchyard: pvc-1")
			for _, p := range [][2]string{{v1, nodeB}, {v2, nodeA}, {v1, nodeB}} {
				if err := pub(p[0], p[1]); err != nil {
					t.Fatal(err)
				}
			}
			expect("v1 to b, v2 to a", map[string][]string{"pvc-1": {iqnA, iqnB}, "pvc-2": {iqnA}}, "switchyard: pvc-1", "switchyard: pvc-2")
			unpub(v1, nodeA)
			unpub(v1, nodeA)
			expect("v1 from a", map[string][]string{"pvc-1": {iqnB}, "pvc-2": {iqnA}}, "switchyard: pvc-1", "switchyard: pvc-2")
			unpub(v1, nodeB)
			expect("v1 from b, its last node", map[string][]string{"pvc-2": {iqnA}}, "switchyard: pvc-2")
			if err := pub(v1, nodeB); err != nil {
				t.Fatal(err)
			}
			expect("v1 to b again", map[string][]string{"pvc-1": {iqnB}, "pvc-2": {iqnA}}, "switchyard: pvc-1", "switchyard: pvc-2")
			unpub(v2, "")
			expect("v2 from every node", map[string][]string{"pvc-1": {iqnB}}, "switchyard: pvc-1")
			if err := pub(v1, "n=c"); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "proxy.nodeId.parts.iqn") {
				t.Errorf("a node id without an IQN: %v", err)
			}
			if err := pub(v1, "some-fake-node-id"); status.Code(err) != codes.NotFound {
				t.Errorf("a node id of no node: %v", err)
			}
			for _, v := range []string{v1, v2} {
				if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v}); err != nil {
					t.Fatal(err)
				}
			}
			if admits, _ := iscsiAccess(t, h); len(admits) != 0 {
				t.Errorf("targets left: %v", admits)
			}
			expect("deleted", nil)
			unpub(v1, nodeB)
			if err := pub(v1, nodeB); status.Code(err) != codes.NotFound {
				t.Errorf("publish of a deleted volume: %v", err)
			}

			// Open (the default): the configured groups, no publish step.
			open := newNodeIDDriver(t, h.DriverConfig(tc.driver, "open", ""))
			v3 := mk(open, "pvc-3")
			if admits, _ := iscsiAccess(t, h); !slices.Equal(admits["pvc-3"], []string{"*"}) {
				t.Errorf("an open connection's target admits %q, want every initiator", admits["pvc-3"])
			}
			if _, err := open.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v3, NodeId: nodeA, VolumeCapability: caps(true)[0]}); err != nil && status.Code(err) != codes.Unimplemented {
				// freenas-iscsi (SSH) answers OK, granting nothing; the API drivers leave publish unimplemented.
				t.Errorf("publish on an open connection: %v", err)
			}
			// The same volumes read with allowList: the open target is
			// not taken over, and unpublish leaves it alone.
			closed := newNodeIDDriver(t, allowListISCSI(h, tc.driver, "open"))
			if _, err := closed.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v3, NodeId: nodeA, VolumeCapability: caps(true)[0]}); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "admits every initiator") {
				t.Errorf("publish of an open target with allowList: %v", err)
			}
			if _, err := closed.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: v3, NodeId: nodeA}); err != nil {
				t.Errorf("unpublish of an open target with allowList: %v", err)
			}
			if admits, _ := iscsiAccess(t, h); !slices.Equal(admits["pvc-3"], []string{"*"}) {
				t.Errorf("the open target now admits %q", admits["pvc-3"])
			}
		})
	}
}
