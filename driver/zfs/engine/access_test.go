package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// accessSharer is the fake sharer with per-dataset allow-lists.
type accessSharer struct {
	*fakeSharer
	kind    Initiator
	mu      sync.Mutex
	granted map[string][]string // dataset -> initiators
}

func (a *accessSharer) Initiator() Initiator { return a.kind }

func (a *accessSharer) Grant(_ context.Context, ds string, props zfs.Properties, who string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if props["fake:share_name"].Value == "" {
		panic("Grant without the asset properties")
	}
	if !slices.Contains(a.granted[ds], who) {
		a.granted[ds] = append(a.granted[ds], who)
	}
	return nil
}

func (a *accessSharer) Revoke(_ context.Context, ds string, _ zfs.Properties, who string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if who == "" {
		delete(a.granted, ds)
		return nil
	}
	a.granted[ds] = slices.DeleteFunc(a.granted[ds], func(s string) bool { return s == who })
	return nil
}

func (a *accessSharer) Remove(ctx context.Context, ds string, props zfs.Properties) error {
	a.mu.Lock()
	delete(a.granted, ds) // the target goes, with its allow-list
	a.mu.Unlock()
	return a.fakeSharer.Remove(ctx, ds, props)
}

func newAccessEngine(t *testing.T, kind Initiator) (*Engine, *accessSharer) {
	t.Helper()
	e, p := newFakeEngine(t, "zfs-generic-iscsi", true, "  datasetParentName: tank/v\n")
	a := &accessSharer{fakeSharer: p.share, kind: kind, granted: map[string][]string{}}
	e.share = a
	e.parseNodeID = nodeid.Parser(nodeid.Settings{NodeName: true, IQN: true, NQN: true,
		IQNPrefixes: []nodeid.Prefix{{ShortName: "1", Prefix: "iqn.1993-08.org.debian:01:"}}})
	return e, a
}

func blockCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
}

func hasPublish(t *testing.T, e *Engine) bool {
	t.Helper()
	resp, err := e.ControllerGetCapabilities(ctx, nil)
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

// TestHostAccessOff: open targets (the default) have no publish step: the
// capability is not advertised and both calls are UNIMPLEMENTED (the proxy
// answers them for the backend).
func TestHostAccessOff(t *testing.T) {
	for _, kind := range []Initiator{-1, OpenTargets} { // -1: a sharer without HostAccess
		e, _ := newFakeEngine(t, "zfs-generic-iscsi", true, "  datasetParentName: tank/v\n")
		if kind == OpenTargets { // a sharer that could, configured open
			e.share = &accessSharer{fakeSharer: e.share.(*fakeSharer), kind: OpenTargets}
		}
		if hasPublish(t, e) {
			t.Error("PUBLISH_UNPUBLISH_VOLUME advertised with open targets")
		}
		_, err := e.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", NodeId: "n=a", VolumeCapability: blockCap()})
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("publish: %v", err)
		}
		_, err = e.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: "pvc-1", NodeId: "n=a"})
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("unpublish: %v", err)
		}
	}
}

// TestHostAccessGrants: publish grants exactly the node's initiator, a
// second node gets its own, repeats change nothing, unpublish withdraws
// one node (or all with an empty node id) and delete takes what is left.
func TestHostAccessGrants(t *testing.T) {
	e, a := newAccessEngine(t, IQN)
	if !hasPublish(t, e) {
		t.Fatal("PUBLISH_UNPUBLISH_VOLUME not advertised")
	}
	if _, err := e.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: []*csi.VolumeCapability{blockCap()}}); err != nil {
		t.Fatal(err)
	}
	const ds = "tank/v/pvc-1"
	pub := func(node string) error {
		_, err := e.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", NodeId: node, VolumeCapability: blockCap()})
		return err
	}
	unpub := func(node string) error {
		_, err := e.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: "pvc-1", NodeId: node})
		return err
	}
	nodeA, nodeB := "n=a/i1=aaaa", "n=b/i=iqn.2005-03.org.open-iscsi:BBBB"
	for range 2 {
		if err := pub(nodeA); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.granted[ds]; !slices.Equal(got, []string{"iqn.1993-08.org.debian:01:aaaa"}) {
		t.Fatalf("granted %v", got)
	}
	if err := pub(nodeB); err != nil {
		t.Fatal(err)
	}
	if got := a.granted[ds]; !slices.Equal(got, []string{"iqn.1993-08.org.debian:01:aaaa", "iqn.2005-03.org.open-iscsi:bbbb"}) {
		t.Fatalf("granted %v (IQNs are lowercased as LIO keeps them)", got)
	}
	for range 2 {
		if err := unpub(nodeA); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.granted[ds]; !slices.Equal(got, []string{"iqn.2005-03.org.open-iscsi:bbbb"}) {
		t.Fatalf("after unpublish of a: %v", got)
	}
	if err := pub(nodeA); err != nil {
		t.Fatal(err)
	}
	if err := unpub(""); err != nil {
		t.Fatal(err)
	}
	if len(a.granted[ds]) != 0 {
		t.Fatalf("unpublish from every node left %v", a.granted[ds])
	}
	if err := pub(nodeA); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.granted[ds]; ok {
		t.Fatalf("delete left grants %v", a.granted[ds])
	}
	// Gone: unpublish succeeds, publish is NOT_FOUND.
	if err := unpub(nodeA); err != nil {
		t.Errorf("unpublish of a deleted volume: %v", err)
	}
	if err := pub(nodeA); status.Code(err) != codes.NotFound {
		t.Errorf("publish of a deleted volume: %v", err)
	}
}

// TestHostAccessNodeIDs: what each kind of node id gets.
func TestHostAccessNodeIDs(t *testing.T) {
	for _, tc := range []struct {
		kind Initiator
		node string
		code codes.Code
		want string
	}{
		{IQN, "n=a/i1=x", codes.OK, "iqn.1993-08.org.debian:01:x"},
		{IQN, "iqn.2005-03.org.open-iscsi:plain", codes.OK, "iqn.2005-03.org.open-iscsi:plain"}, // a standalone node whose CSI_NODE_ID is its IQN
		{NQN, "n=a/v=nqn.2014-08.org.nvmexpress:uuid:1", codes.OK, "nqn.2014-08.org.nvmexpress:uuid:1"},
		{NQN, "nqn.2014-08.org.nvmexpress:uuid:2", codes.OK, "nqn.2014-08.org.nvmexpress:uuid:2"},
		{IQN, "n=a", codes.FailedPrecondition, "proxy.nodeId.parts.iqn"},
		{NQN, "n=a/i1=x", codes.FailedPrecondition, "proxy.nodeId.parts.nqn"},
		{NQN, "some-fake-node-id", codes.NotFound, "does not exist"},
		{NQN, "n=a/v=not-an-nqn", codes.InvalidArgument, "not a valid"},
	} {
		e, a := newAccessEngine(t, tc.kind)
		if _, err := e.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: []*csi.VolumeCapability{blockCap()}}); err != nil {
			t.Fatal(err)
		}
		_, err := e.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", NodeId: tc.node, VolumeCapability: blockCap()})
		if status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.node, err, tc.code)
			continue
		}
		if tc.code == codes.OK {
			if got := a.granted["tank/v/pvc-1"]; !slices.Equal(got, []string{tc.want}) {
				t.Errorf("%s: granted %v", tc.node, got)
			}
		} else if !strings.Contains(status.Convert(err).Message(), tc.want) {
			t.Errorf("%s: %q lacks %q", tc.node, status.Convert(err).Message(), tc.want)
		}
		// Unpublish never fails on a node id: nothing can have been granted to it.
		if _, err := e.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: "pvc-1", NodeId: tc.node}); err != nil {
			t.Errorf("%s: unpublish %v", tc.node, err)
		}
	}
}

// TestHostAccessArguments: CSI's argument checks come first; an unknown
// volume is NOT_FOUND.
func TestHostAccessArguments(t *testing.T) {
	e, _ := newAccessEngine(t, NQN)
	for _, tc := range []struct {
		req  *csi.ControllerPublishVolumeRequest
		code codes.Code
	}{
		{&csi.ControllerPublishVolumeRequest{NodeId: "n=a", VolumeCapability: blockCap()}, codes.InvalidArgument},
		{&csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", VolumeCapability: blockCap()}, codes.InvalidArgument},
		{&csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", NodeId: "n=a"}, codes.InvalidArgument},
		{&csi.ControllerPublishVolumeRequest{VolumeId: "pvc-none", NodeId: "n=a/v=nqn.x", VolumeCapability: blockCap()}, codes.NotFound},
		{&csi.ControllerPublishVolumeRequest{VolumeId: "../x", NodeId: "n=a/v=nqn.x", VolumeCapability: blockCap()}, codes.NotFound},
	} {
		if _, err := e.ControllerPublishVolume(ctx, tc.req); status.Code(err) != tc.code {
			t.Errorf("%+v: %v, want %v", tc.req, err, tc.code)
		}
	}
	if _, err := e.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{NodeId: "n=a"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("unpublish without volume_id: %v", err)
	}
}
