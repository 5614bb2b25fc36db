package infinia

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

const hostA = "nqn.2014-08.org.nvmexpress:uuid:aaaa"
const hostB = "nqn.2014-08.org.nvmexpress:uuid:bbbb"

func TestHostNQNFromNodeID(t *testing.T) {
	cases := []struct {
		name   string
		parse  func(string) (backend.NodeIdentity, error)
		nodeID string
		want   string
		frag   string // expected NOT_FOUND message part when want is ""
	}{
		{"parser with nqn part", nqnParser, "n=node1/v=" + hostA, hostA, ""},
		{"parser without nqn part", nqnParser, "n=node1", "", "enable proxy.nodeId.parts.nqn"},
		{"parser error", nqnParser, "node1", "", "cannot be read"},
		{"no parser, raw nqn", nil, hostA, hostA, ""},
		{"no parser, plain name", nil, "node1", "", "carries no NVMe host NQN"},
		{"parser fails but id is an nqn", func(string) (backend.NodeIdentity, error) { return backend.NodeIdentity{}, errors.New("x") }, hostA, hostA, ""},
		{"not an nqn", func(string) (backend.NodeIdentity, error) { return backend.NodeIdentity{NQN: "iqn.x"}, nil }, "n=a", "", "not an NVMe qualified name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &Driver{parseNodeID: tc.parse}
			got, err := d.hostNQN(tc.nodeID)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			wantCode(t, err, codes.NotFound, tc.frag)
		})
	}
}

func TestPublishAndUnpublish(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nqnParser)
	ctx := context.Background()
	v := mustCreate(t, d, "pvc-pub", 1<<20)
	for range 2 { // idempotent
		resp, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolumeId(), NodeId: "n=a/v=" + hostA,
			VolumeCapability: mountRWO, VolumeContext: v.GetVolumeContext()})
		if err != nil {
			t.Fatal(err)
		}
		pc := resp.GetPublishContext()
		for _, k := range []string{"nqn", "transport", "transports", "nsid", "uuid", "node_attach_driver"} {
			if pc[k] != v.GetVolumeContext()[k] {
				t.Errorf("publish_context[%s] = %q, volume_context has %q", k, pc[k], v.GetVolumeContext()[k])
			}
		}
	}
	if _, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolumeId(), NodeId: "n=b/v=" + hostB, VolumeCapability: mountRWO, Readonly: true}); err != nil {
		t.Fatal(err)
	}
	if hosts := f.subsystem("red", "pvc-pub").Hosts; !slices.Equal(hosts, []string{hostA, hostB}) {
		t.Fatalf("hosts %v", hosts)
	}
	for range 2 {
		if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: v.GetVolumeId(), NodeId: "n=a/v=" + hostA}); err != nil {
			t.Fatal(err)
		}
	}
	if hosts := f.subsystem("red", "pvc-pub").Hosts; !slices.Equal(hosts, []string{hostB}) {
		t.Fatalf("after unpublishing A: hosts %v", hosts)
	}
	if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if hosts := f.subsystem("red", "pvc-pub").Hosts; len(hosts) != 0 {
		t.Fatalf("an empty node id must withdraw every host, left %v", hosts)
	}
}

func TestPublishErrors(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nqnParser)
	ctx := context.Background()
	v := mustCreate(t, d, "pvc-e", 1<<20)
	cases := []struct {
		name string
		req  *csi.ControllerPublishVolumeRequest
		code codes.Code
		frag string
	}{
		{"no volume id", &csi.ControllerPublishVolumeRequest{NodeId: "n=a/v=" + hostA, VolumeCapability: mountRWO}, codes.InvalidArgument, "volume_id"},
		{"no node id", &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolumeId(), VolumeCapability: mountRWO}, codes.InvalidArgument, "node_id"},
		{"no capability", &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolumeId(), NodeId: "n=a/v=" + hostA}, codes.InvalidArgument, "volume_capability"},
		{"malformed handle", &csi.ControllerPublishVolumeRequest{VolumeId: "junk", NodeId: "n=a/v=" + hostA, VolumeCapability: mountRWO}, codes.NotFound, "junk"},
		{"gone volume", &csi.ControllerPublishVolumeRequest{VolumeId: acctKey + ":red/csiService/gone", NodeId: "n=a/v=" + hostA, VolumeCapability: mountRWO}, codes.NotFound, "gone"},
		{"no nqn", &csi.ControllerPublishVolumeRequest{VolumeId: v.GetVolumeId(), NodeId: "n=a", VolumeCapability: mountRWO}, codes.NotFound, "proxy.nodeId.parts.nqn"},
		{"unknown account", &csi.ControllerPublishVolumeRequest{VolumeId: "c/t/x:red/csiService/pvc-e", NodeId: "n=a/v=" + hostA, VolumeCapability: mountRWO}, codes.FailedPrecondition, "c/t/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.ControllerPublishVolume(ctx, tc.req)
			wantCode(t, err, tc.code, tc.frag)
		})
	}
	for _, id := range []string{"junk", acctKey + ":red/csiService/gone"} {
		if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: "n=a/v=" + hostA}); err != nil {
			t.Errorf("unpublish of %s: %v", id, err)
		}
	}
}

// A PersistentVolume made for DDN's driver: a volume exported by a
// subsystem of its own name, no xattrs, no volumeAttributes.
func TestStaticVolumeWithDDNHandle(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url, `owneruid: "10"`, `groupuid: "20"`), nqnParser)
	f.mu.Lock()
	sub := f.subs["red"]
	sub.subsystems["shared-tg"] = &api.Subsystem{Name: "shared-tg", NQN: "nqn.2023-03.com.ddn:red:clu1:red:red:shared-tg",
		Namespaces: []api.Namespace{{NSID: "4", Volume: "vol1", UUID: "11111111-2222-4333-8444-555555555555"}},
		Listeners:  []api.Listener{{TrType: "TCP", TrSvcID: "4420", TrAddrs: []string{"10.0.0.9", "fe80::1"}}}}
	sub.datasets["csiService"].volumes["vol1"] = &api.Volume{Name: "vol1", UUID: "11111111-2222-4333-8444-555555555555",
		BlockSize: 4096, NBlocks: 256, Subsystem: "shared-tg", NSID: "4"}
	f.mu.Unlock()

	ctx := context.Background()
	id := acctKey + ":red/csiService/vol1"
	resp, err := d.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: "n=a/v=" + hostA, VolumeCapability: mountRWO})
	if err != nil {
		t.Fatal(err)
	}
	pc := resp.GetPublishContext()
	if pc["nsid"] != "4" || pc["transports"] != "tcp://10.0.0.9:4420,tcp://[fe80::1]:4420" || pc["owneruid"] != "10" || pc["groupuid"] != "20" {
		t.Fatalf("publish_context %v", pc)
	}
	if _, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 20}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: "n=a/v=" + hostA}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Fatal(err)
	}
	if len(f.volumeNames("red", "csiService")) != 0 {
		t.Fatal("static volume not deleted")
	}
	if f.subsystem("red", "shared-tg") == nil {
		t.Fatal("a subsystem not named after the volume is not the driver's to delete")
	}
}
