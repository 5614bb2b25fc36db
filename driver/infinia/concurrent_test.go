package infinia

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
	"github.com/switchyard-csi/switchyard/lab/gate"
)

// holdUntil makes the fake hold every request whose method and path
// suffix match until n of them are in flight together, or a second has
// passed; the gate tells whether all n ever were.
func holdUntil(f *fakeInfinia, method, suffix string, n int) *gate.Gate {
	g := gate.New(n)
	f.mu.Lock()
	f.hold = func(r *http.Request) {
		if r.Method == method && strings.HasSuffix(r.URL.Path, suffix) {
			g.Wait(time.Second)
		}
	}
	f.mu.Unlock()
	return g
}

// TestExposesGoTogether: a create exposes the volume on its instances at
// once (the fake holds each expose until both have arrived; sent one
// after the other, the first would wait out its second alone).
func TestExposesGoTogether(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	together := holdUntil(f, http.MethodPut, "/expose", 2)
	v := mustCreate(t, d, "pvc-1", 1<<20)
	if !together.Opened() {
		t.Fatal("the two exposes were never in flight together")
	}
	if n := len(strings.Split(v.GetVolumeContext()["transports"], ",")); n != 2 {
		t.Errorf("transports %q, want both instances", v.GetVolumeContext()["transports"])
	}
}

// TestServiceAndVolumeReadTogether: once a service's dataset is known, a
// create reads the service and its volume at once.
func TestServiceAndVolumeReadTogether(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	mustCreate(t, d, "pvc-1", 1<<20) // the dataset is now known
	var mu sync.Mutex
	inFlight, most := 0, 0
	f.mu.Lock()
	f.hold = func(r *http.Request) {
		if r.Method != http.MethodGet || !(strings.Contains(r.URL.Path, "/services/") || strings.Contains(r.URL.Path, "/volumes/")) {
			return
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	f.mu.Unlock()
	mustCreate(t, d, "pvc-2", 1<<20)
	if most != 2 {
		t.Errorf("at most %d of the service and volume reads in flight together, want 2", most)
	}
}

// TestExposeFailureWaitsForTheOthers: one instance refused while the
// other's expose is still in flight. The create names the refused
// instance and removes what it made only after every expose answered, so
// nothing is left behind.
func TestExposeFailureWaitsForTheOthers(t *testing.T) {
	f := newFake(t)
	f.addService("red", "three", 1, 2, 9) // instance 9 does not exist
	d := newTestDriver(t, accountYAML(f.url), nil)
	together := holdUntil(f, http.MethodPut, "/expose", 3)
	_, err := d.CreateVolume(context.Background(), createReq("pvc-9", 1<<20, map[string]string{"service": "red/three"}))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "instance 9") {
		t.Fatalf("create with an unknown instance: %v, want INVALID_ARGUMENT naming instance 9", err)
	}
	if !together.Opened() {
		t.Error("the three exposes were never in flight together")
	}
	if n := len(f.volumeNames("red", "three")); n != 0 {
		t.Errorf("%d volumes left after the failed create", n)
	}
	if s := f.subsystem("red", "pvc-9"); s != nil {
		t.Errorf("subsystem left after the failed create: %+v", s)
	}
}

// TestMovedDatasetIsReadAgain: the volume read sent with the service's
// rests on the dataset remembered from an earlier read. When the service
// answers another dataset, the volume is looked for there: a volume of
// that name in the old dataset must not pass for this create's.
func TestMovedDatasetIsReadAgain(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	mustCreate(t, d, "pvc-1", 1<<20)
	f.mu.Lock()
	s := f.subs["red"]
	s.services["csiService"].Dataset = "moved"
	s.datasets["moved"] = &fakeDataset{volumes: map[string]*api.Volume{}}
	delete(s.subsystems, "pvc-1") // the new volume gets its own subsystem
	f.mu.Unlock()
	mustCreate(t, d, "pvc-1", 1<<20)
	if got := f.volumeNames("red", "moved"); len(got) != 1 || got[0] != "pvc-1" {
		t.Errorf("volumes in the service's new dataset: %v, want pvc-1 made there", got)
	}
}

// TestLostExposeIsExposedAgain: if the system lost one of the exposes sent
// at once (answered, not applied), the subsystem read after them lacks
// that instance; the create exposes it again alone, so the volume gets a
// path on every instance, not fewer than asked.
func TestLostExposeIsExposedAgain(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	f.mu.Lock()
	f.lostExposes = 1
	f.mu.Unlock()
	v := mustCreate(t, d, "pvc-1", 1<<20)
	if n := len(strings.Split(v.GetVolumeContext()["transports"], ",")); n != 2 {
		t.Errorf("transports %q, want both instances", v.GetVolumeContext()["transports"])
	}
	if s := f.subsystem("red", "pvc-1"); s == nil || len(s.Listeners) != 2 {
		t.Errorf("subsystem after the create: %+v, want a listener on each of the 2 instances", s)
	}
}
