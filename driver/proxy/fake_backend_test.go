package proxy

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

// fakeType is an in-memory backend for the proxy's unit tests. Its create
// is deliberately check-then-act with a pause in between, so only the
// server's per-name lock keeps concurrent creates of one name apart.
const fakeType = "fake-test"

var fakes = struct {
	sync.Mutex
	built  atomic.Int64
	closed atomic.Int64
	vols   map[string]map[string]int // label → id → times created
}{vols: map[string]map[string]int{}}

// fakeBuildGate holds back the constructor of a fake with slowBuild set.
var fakeBuildGate, fakeBuildStarted = make(chan struct{}), make(chan struct{}, 1)

func init() {
	backend.Register(backend.Type{Name: "fake-local-test", NodeLocal: true, New: func(backend.Options) (backend.Driver, error) { return &fakeDriver{}, nil }})
	registerFake(fakeType)
	registerFake(fakeISCSIType)
	registerFake(fakeAPIType)
}

// fakeAPIType stands for a TrueNAS API connection (freenas-api-nfs).
const fakeAPIType = "fake-api-nfs-test"

// fakeISCSIType is a fake of another family (iscsi, block), for the
// connection-set family checks.
const fakeISCSIType = "fake-iscsi-test"

func registerFake(name string) {
	backend.Register(backend.Type{
		Name: name, ConfigKey: "fake", MaxVolumeIDLen: 40, MaxSnapshotIDLen: 40,
		Validate: func(t config.Tree) []config.Problem {
			if _, ok := t.String("fake.label"); !ok {
				return []config.Problem{{Key: "fake.label", Msg: "required"}}
			}
			return nil
		},
		New: func(o backend.Options) (backend.Driver, error) {
			label, _ := o.Config.String("fake.label")
			prefix, _ := o.Config.String("fake.idPrefix")
			noCap, _, _ := o.Config.Bool("fake.noCapacity")
			capacity, _ := o.Config.String("fake.capacity")
			lookupFails, _, _ := o.Config.Bool("fake.lookupFails")
			if slow, _, _ := o.Config.Bool("fake.slowBuild"); slow {
				fakeBuildStarted <- struct{}{}
				<-fakeBuildGate // a constructor that takes its time
			}
			fakes.built.Add(1)
			fakes.Lock()
			if fakes.vols[label] == nil {
				fakes.vols[label] = map[string]int{}
			}
			fakes.Unlock()
			f := &fakeDriver{label: label, prefix: prefix, noCapacity: noCap, capacity: 1000, lookupFails: lookupFails}
			if capacity != "" {
				if _, err := fmt.Sscan(capacity, &f.capacity); err != nil {
					return nil, err
				}
			}
			return wrapStream(f, o.Config), nil
		},
	})
}

type fakeDriver struct {
	csipb.UnimplementedControllerServer
	label, prefix string
	noCapacity    bool
	capacity      int64
	lookupFails   bool // ValidateVolumeCapabilities answers UNAVAILABLE
	closed        atomic.Bool
}

func (f *fakeDriver) Close() error {
	if f.closed.Swap(true) {
		panic("fake driver closed twice")
	}
	fakes.closed.Add(1)
	return nil
}

func (f *fakeDriver) CreateVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	if f.closed.Load() {
		return nil, status.Error(codes.Internal, "driver used after Close")
	}
	id := f.prefix + req.GetName()
	fakes.Lock()
	_, exists := fakes.vols[f.label][id]
	fakes.Unlock()
	if !exists {
		time.Sleep(time.Millisecond) // widen the race window
		fakes.Lock()
		fakes.vols[f.label][id]++ // a racing duplicate create shows as 2
		fakes.Unlock()
	}
	resp := &csipb.CreateVolumeResponse{Volume: &csipb.Volume{VolumeId: id, CapacityBytes: req.GetCapacityRange().GetRequiredBytes(),
		ContentSource: req.GetVolumeContentSource()}}
	return resp, nil
}

func (f *fakeDriver) DeleteVolume(ctx context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	fakes.Lock()
	defer fakes.Unlock()
	delete(fakes.vols[f.label], req.GetVolumeId())
	return &csipb.DeleteVolumeResponse{}, nil
}

func (f *fakeDriver) ValidateVolumeCapabilities(ctx context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	if f.lookupFails {
		return nil, status.Error(codes.Unavailable, "backend unreachable")
	}
	fakes.Lock()
	_, ok := fakes.vols[f.label][req.GetVolumeId()]
	fakes.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", req.GetVolumeId())
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{VolumeCapabilities: req.GetVolumeCapabilities()}}, nil
}

func (f *fakeDriver) GetCapacity(ctx context.Context, req *csipb.GetCapacityRequest) (*csipb.GetCapacityResponse, error) {
	if f.noCapacity {
		return nil, status.Error(codes.Unimplemented, "no capacity")
	}
	return &csipb.GetCapacityResponse{AvailableCapacity: f.capacity}, nil
}

// ListVolumes pages with the index as token.
func (f *fakeDriver) ListVolumes(ctx context.Context, req *csipb.ListVolumesRequest) (*csipb.ListVolumesResponse, error) {
	fakes.Lock()
	var ids []string
	for k := range fakes.vols[f.label] {
		ids = append(ids, k)
	}
	fakes.Unlock()
	sort.Strings(ids)
	start := 0
	if t := req.GetStartingToken(); t != "" {
		if _, err := fmt.Sscan(t, &start); err != nil || start > len(ids) {
			return nil, status.Error(codes.Aborted, "bad token")
		}
	}
	end := len(ids)
	if m := int(req.GetMaxEntries()); m > 0 && start+m < end {
		end = start + m
	}
	resp := &csipb.ListVolumesResponse{}
	for _, id := range ids[start:end] {
		resp.Entries = append(resp.Entries, &csipb.ListVolumesResponse_Entry{Volume: &csipb.Volume{VolumeId: id}})
	}
	if end < len(ids) {
		resp.NextToken = fmt.Sprint(end)
	}
	return resp, nil
}

// fakeVolumes returns a copy of a label's volumes with their create counts.
func fakeVolumes(label string) map[string]int {
	fakes.Lock()
	defer fakes.Unlock()
	out := map[string]int{}
	for k, v := range fakes.vols[label] {
		out[k] = v
	}
	return out
}

func lookupFake() (*backend.Type, bool) { return backend.Lookup(fakeType) }

// ListSnapshots knows one snapshot, "snap-1" of "pvc-1"; the fake has no
// GetSnapshot, so the proxy must answer GetSnapshot through this list.
func (f *fakeDriver) ListSnapshots(ctx context.Context, req *csipb.ListSnapshotsRequest) (*csipb.ListSnapshotsResponse, error) {
	resp := &csipb.ListSnapshotsResponse{}
	if req.GetSnapshotId() == "" || req.GetSnapshotId() == "snap-1" {
		resp.Entries = append(resp.Entries, &csipb.ListSnapshotsResponse_Entry{Snapshot: &csipb.Snapshot{SnapshotId: "snap-1", SourceVolumeId: "pvc-1", ReadyToUse: true}})
	}
	return resp, nil
}
