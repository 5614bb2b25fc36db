package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

const zoneKey = DefaultTopologyPrefix + "/zone"

// member writes a fake connection with free bytes, an optional zone and labels.
func (r *rig) member(name string, free int64, zone string, labels ...string) string {
	r.t.Helper()
	extra := []string{fmt.Sprintf("  capacity: \"%d\"", free), "proxy:"}
	if zone != "" {
		extra = append(extra, "  perDriver:", "    topology:", "    - requirements: {zone: "+zone+"}")
	}
	if len(labels) > 0 {
		extra = append(extra, "  labels:")
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			extra = append(extra, "    "+k+": "+v)
		}
	}
	return r.fake(name, extra...)
}

func setReq(name string, params map[string]string, topo *csipb.TopologyRequirement) *csipb.CreateVolumeRequest {
	return &csipb.CreateVolumeRequest{Name: name, Parameters: params, VolumeCapabilities: mountCap,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}, AccessibilityRequirements: topo}
}

func zoneTerm(z string) *csipb.Topology {
	return &csipb.Topology{Segments: map[string]string{zoneKey: z}}
}

// total counts the volumes of name over labels, with the creates each took.
func total(name string, labels ...string) (where []string, creates int) {
	for _, l := range labels {
		if n, ok := fakeVolumes(l)[name]; ok {
			where = append(where, l)
			creates += n
		}
	}
	return where, creates
}

// 64 concurrent creates of one name across a 3-connection set make exactly
// one volume, and every caller gets the same handle.
func TestSetConcurrentCreatesMakeOneVolume(t *testing.T) {
	r := newRig(t)
	labels := []string{r.member("s1", 1<<30, ""), r.member("s2", 1<<30, ""), r.member("s3", 1<<30, "")}
	params := map[string]string{ConnectionsParameter: "s1,s2,s3"}
	const n = 64
	handles := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-race", params, nil))
			handles[i], errs[i] = resp.GetVolume().GetVolumeId(), err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if handles[i] != handles[0] {
			t.Fatalf("create %d returned %s, create 0 %s", i, handles[i], handles[0])
		}
	}
	where, creates := total("pvc-race", labels...)
	if len(where) != 1 || creates != 1 {
		t.Fatalf("volume on %v, made %d times; want exactly one volume made once", where, creates)
	}
	t.Logf("64 concurrent creates: one volume, handle %s", handles[0])
}

// A retry finds the volume on the member that made it even when the policy
// would now choose another member (its free space changed).
func TestSetRetryFindsVolumeWhereItWasMade(t *testing.T) {
	r := newRig(t)
	la := r.member("a", 5<<30, "")
	lb := r.member("b", 1<<30, "")
	params := map[string]string{ConnectionsParameter: "a,b"}
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-1", params, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetVolume().GetVolumeId(); got != "v:a/pvc-1" {
		t.Fatalf("first create: %s; want v:a/pvc-1 (most free space)", got)
	}
	r.member("a", 1<<21, "") // a is nearly full now; b would be chosen for a new name
	resp, err = r.ctl.CreateVolume(context.Background(), setReq("pvc-1", params, nil))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:a/pvc-1" {
		t.Fatalf("retry: %v, %v; want v:a/pvc-1", resp.GetVolume().GetVolumeId(), err)
	}
	if where, creates := total("pvc-1", la, lb); len(where) != 1 || creates != 1 {
		t.Fatalf("volume on %v, made %d times", where, creates)
	}
	resp, err = r.ctl.CreateVolume(context.Background(), setReq("pvc-2", params, nil))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:b/pvc-2" {
		t.Fatalf("new name: %v, %v; want v:b/pvc-2", resp.GetVolume().GetVolumeId(), err)
	}
}

// The choice: topology first, then room, then preferred order, most free
// space, set order.
func TestSetChoice(t *testing.T) {
	r := newRig(t)
	r.member("za1", 2<<30, "a")
	r.member("za2", 8<<30, "a")
	r.member("zb", 9<<30, "b")
	r.member("tiny", 1<<10, "")
	r.member("any", 3<<30, "")
	r.member("any2", 3<<30, "")
	cases := []struct {
		name, set string
		topo      *csipb.TopologyRequirement
		want      string
	}{
		{"no requirements: most free space", "za1,za2,zb", nil, "zb"},
		{"WaitForFirstConsumer: the pod's zone decides", "za1,za2,zb", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{zoneTerm("a")}, Preferred: []*csipb.Topology{zoneTerm("a")}}, "za2"},
		{"allowedTopologies: any allowed zone, preferred first", "za1,zb", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{zoneTerm("a"), zoneTerm("b")}, Preferred: []*csipb.Topology{zoneTerm("a"), zoneTerm("b")}}, "za1"},
		{"a member without topology serves every zone", "zb,any", &csipb.TopologyRequirement{Requisite: []*csipb.Topology{zoneTerm("a")}}, "any"},
		{"full member passed over", "tiny,za1", nil, "za1"},
		{"tie: set order", "any2,any", nil, "any2"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := r.ctl.CreateVolume(context.Background(), setReq(fmt.Sprintf("pvc-c%d", i), map[string]string{ConnectionsParameter: c.set}, c.topo))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := resp.GetVolume().GetVolumeId(), fmt.Sprintf("v:%s/pvc-c%d", c.want, i); got != want {
				t.Fatalf("got %s; want %s", got, want)
			}
		})
	}
}

func TestSetSelector(t *testing.T) {
	r := newRig(t)
	r.member("fast-1", 1<<30, "", "tier=fast")
	r.member("fast-2", 4<<30, "", "tier=fast", "old=yes")
	r.member("slow", 9<<30, "", "tier=slow")
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-s", map[string]string{SelectorParameter: "tier=fast"}, nil))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:fast-2/pvc-s" {
		t.Fatalf("tier=fast: %v, %v; want v:fast-2/pvc-s", resp.GetVolume().GetVolumeId(), err)
	}
	resp, err = r.ctl.CreateVolume(context.Background(), setReq("pvc-t", map[string]string{SelectorParameter: "tier=fast,old!=yes"}, nil))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:fast-1/pvc-t" {
		t.Fatalf("tier=fast,old!=yes: %v, %v; want v:fast-1/pvc-t", resp.GetVolume().GetVolumeId(), err)
	}
	_, err = r.ctl.CreateVolume(context.Background(), setReq("pvc-u", map[string]string{SelectorParameter: "tier=gold"}, nil))
	wantCode(t, "selector matching nothing", err, codes.InvalidArgument, "connectionSelector", "tier=gold", "selects no connection")
}

// Bad input: each refused with INVALID_ARGUMENT naming the key or the
// connection, and nothing made anywhere.
func TestSetBadInput(t *testing.T) {
	r := newRig(t)
	la := r.member("ok", 1<<30, "a")
	r.write("blk", "driver: fake-iscsi-test\nfake:\n  label: "+t.Name()+"-blk\n  capacity: \"1073741824\"\n")
	r.write("broken", "driver: fake-test\nfake: {}\n")
	cases := []struct {
		name   string
		params map[string]string
		topo   *csipb.TopologyRequirement
		code   codes.Code
		words  []string
	}{
		{"unknown member", map[string]string{ConnectionsParameter: "ok,nosuch"}, nil, codes.InvalidArgument, []string{"connections", "nosuch", "no file nosuch.yaml"}},
		{"empty set", map[string]string{ConnectionsParameter: ""}, nil, codes.InvalidArgument, []string{"connections", "empty member"}},
		{"empty member", map[string]string{ConnectionsParameter: "ok,,ok"}, nil, codes.InvalidArgument, []string{"empty member"}},
		{"duplicate", map[string]string{ConnectionsParameter: "ok,ok"}, nil, codes.InvalidArgument, []string{"twice"}},
		{"bad name", map[string]string{ConnectionsParameter: "ok,../x"}, nil, codes.InvalidArgument, []string{"connections", "../x"}},
		{"with connection", map[string]string{ConnectionsParameter: "ok", ConnectionParameter: "ok"}, nil, codes.InvalidArgument, []string{"connection", "connections", "both"}},
		{"list and selector", map[string]string{ConnectionsParameter: "ok", SelectorParameter: "a=b"}, nil, codes.InvalidArgument, []string{"both"}},
		{"bad selector", map[string]string{SelectorParameter: "a=b,=c"}, nil, codes.InvalidArgument, []string{"connectionSelector", "not a label key"}},
		{"empty selector", map[string]string{SelectorParameter: " "}, nil, codes.InvalidArgument, []string{"connectionSelector", "empty"}},
		{"block and file", map[string]string{ConnectionsParameter: "ok,blk"}, nil, codes.InvalidArgument, []string{"ok", "blk", "iscsi, block", "different kinds"}},
		{"no member serves the zone", map[string]string{ConnectionsParameter: "ok"}, &csipb.TopologyRequirement{Requisite: []*csipb.Topology{zoneTerm("b")}}, codes.ResourceExhausted, []string{"serves the requested topology", "ok serves none"}},
		{"only a broken member", map[string]string{ConnectionsParameter: "broken"}, nil, codes.FailedPrecondition, []string{"broken", "fake.label"}},
		{"topology key without prefix", map[string]string{ConnectionsParameter: "ok"}, &csipb.TopologyRequirement{Requisite: []*csipb.Topology{{Segments: map[string]string{"zone": "a"}}}}, codes.InvalidArgument, []string{"prefix"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("pvc-bad%d", i)
			_, err := r.ctl.CreateVolume(context.Background(), setReq(name, c.params, c.topo))
			wantCode(t, c.name, err, c.code, c.words...)
			if where, _ := total(name, la, t.Name()+"-blk"); len(where) != 0 {
				t.Fatalf("a volume was made on %v", where)
			}
		})
	}
}

// A broken member is skipped (the others serve); a member that cannot say
// whether it holds the volume stops the create (it might: making it
// elsewhere could leave two).
func TestSetBrokenAndUnreachableMembers(t *testing.T) {
	r := newRig(t)
	lok := r.member("ok", 1<<30, "")
	r.write("broken", "driver: fake-test\nfake: {}\n")
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-b", map[string]string{ConnectionsParameter: "broken,ok"}, nil))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:ok/pvc-b" {
		t.Fatalf("%v, %v; want v:ok/pvc-b", resp.GetVolume().GetVolumeId(), err)
	}
	r.fake("down", "  capacity: \"9999999999\"", "  lookupFails: true")
	_, err = r.ctl.CreateVolume(context.Background(), setReq("pvc-d", map[string]string{ConnectionsParameter: "ok,down"}, nil))
	wantCode(t, "unreachable member", err, codes.Unavailable, "down", "cannot tell", "pvc-d")
	if where, _ := total("pvc-d", lok); len(where) != 0 {
		t.Fatalf("a volume was made on %v", where)
	}
}

func TestSetNoRoom(t *testing.T) {
	r := newRig(t)
	la := r.member("a", 1000, "")
	lb := r.member("b", 2000, "")
	_, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-big", map[string]string{ConnectionsParameter: "a,b"}, nil))
	wantCode(t, "no room", err, codes.ResourceExhausted, "no member", "has room", "a has 1000 bytes free", "b has 2000 bytes free")
	if where, _ := total("pvc-big", la, lb); len(where) != 0 {
		t.Fatalf("a volume was made on %v", where)
	}
}

// GetCapacity of a set: per segment, summed over the members serving it.
func TestSetCapacityPerSegment(t *testing.T) {
	r := newRig(t)
	r.member("a1", 100, "a")
	r.member("a2", 200, "a")
	r.member("b1", 400, "b")
	r.member("all", 1000, "")
	r.fake("nocap", "  noCapacity: true", "proxy:", "  perDriver:", "    topology:", "    - requirements: {zone: c}")
	params := map[string]string{ConnectionsParameter: "a1,a2,b1,all"}
	for _, c := range []struct {
		seg  *csipb.Topology
		want int64
	}{{nil, 1700}, {zoneTerm("a"), 1300}, {zoneTerm("b"), 1400}, {zoneTerm("z"), 1000}} {
		resp, err := r.ctl.GetCapacity(context.Background(), &csipb.GetCapacityRequest{Parameters: params, AccessibleTopology: c.seg})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetAvailableCapacity(); got != c.want {
			t.Errorf("segment %v: %d; want %d", c.seg.GetSegments(), got, c.want)
		}
		if c.seg == nil && resp.GetMaximumVolumeSize().GetValue() != 1000 {
			t.Errorf("maximum_volume_size %v; want 1000 (the largest member)", resp.GetMaximumVolumeSize())
		}
	}
	resp, err := r.ctl.GetCapacity(context.Background(), &csipb.GetCapacityRequest{Parameters: map[string]string{ConnectionsParameter: "a1,nocap"}})
	if err != nil || resp.GetAvailableCapacity() != Unlimited {
		t.Fatalf("with a member that cannot tell: %v, %v; want unlimited", resp.GetAvailableCapacity(), err)
	}
	_, err = r.ctl.GetCapacity(context.Background(), &csipb.GetCapacityRequest{Parameters: map[string]string{ConnectionsParameter: "a1,nosuch"}})
	wantCode(t, "unknown member", err, codes.InvalidArgument, "nosuch")
}

// Volumes a set made list once, under the member that made them, and
// every later call routes by that handle.
func TestSetVolumesListAndRoute(t *testing.T) {
	r := newRig(t)
	r.member("m1", 1<<30, "")
	r.member("m2", 2<<30, "")
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-l", map[string]string{ConnectionsParameter: "m1,m2"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	h := resp.GetVolume().GetVolumeId()
	if err := r.validate(h); err != nil {
		t.Fatalf("validate %s: %v", h, err)
	}
	list, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.GetEntries() {
		if strings.HasSuffix(e.GetVolume().GetVolumeId(), "/pvc-l") {
			n++
			if e.GetVolume().GetVolumeId() != h {
				t.Fatalf("listed as %s; created as %s", e.GetVolume().GetVolumeId(), h)
			}
		}
	}
	if n != 1 {
		t.Fatalf("listed %d times; want once", n)
	}
	if _, err := r.ctl.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: h}); err != nil {
		t.Fatal(err)
	}
	if err := r.validate(h); err == nil {
		t.Fatal("volume still there after delete")
	}
}
