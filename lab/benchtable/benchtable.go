// Package benchtable is switchyard-lab bench's per-backend table (issue 16):
// for each backend, the real switchyard binary as its own process serves
// CreateVolume and DeleteVolume batches at 1, 16 and 64 concurrent callers
// against a simulated storage host in a process of its own (lab/simproc)
// that answers after a fixed latency. Each row has ops/s and p50/p99, the
// round trips the simulator counted per operation, the driver's and the
// simulator's CPU per operation (each from its own process's
// /proc/<pid>/stat, so the figures hold on a busy machine), the driver's
// RSS, and beside them the latency-only bound: round trips × latency for a
// call, and the callers the driver keeps in flight ÷ that for ops/s.
package benchtable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/loadgen"
	"github.com/switchyard-csi/switchyard/lab/procstat"
	"github.com/switchyard-csi/switchyard/lab/simproc"
)

// Options say what to run.
type Options struct {
	Switchyard string        // the driver binary (required)
	Self       string        // an executable that serves lab/simproc children (required for simulated backends)
	Backends   []string      // default: all of Backends
	Callers    []int         // default 1, 16, 64
	Ops        int           // creates (then deletes) per batch; default 200, at least 2 × callers
	Latency    time.Duration // the simulated host's latency per round trip; default 5 ms
	Dir        string        // where the driver and the simulators keep their state; default a temporary directory
	Stderr     io.Writer     // the children's stderr; default discarded
}

// Row is one batch: Ops creates or deletes from Callers callers.
type Row struct {
	Callers, Ops int
	Op           string // "create" or "delete"
	PerSecond    float64
	P50, P99     time.Duration
	RoundTrips   float64 // per op, as the simulator counted them (0: no simulator)
	DriverCPU    time.Duration
	SimCPU       time.Duration // per op; 0 without a simulator
	DriverRSS    int64         // bytes, after the batch
	Bound        time.Duration // RoundTrips × latency (0: no bound)
	BoundPerSec  float64       // min(Callers, slots) ÷ Bound
	// Connections is how many TCP connections the simulator accepted
	// during the batch (0 where it does not count them): kept-alive
	// connections show as none.
	Connections int64
}

// Table is one backend's rows.
type Table struct {
	Backend, About string
	Latency        time.Duration
	Slots          int
	Rows           []Row
}

// Run measures every backend of o in turn.
func Run(ctx context.Context, o Options) ([]Table, error) {
	if o.Switchyard == "" {
		return nil, errors.New("benchtable: no switchyard binary (Options.Switchyard)")
	}
	if len(o.Backends) == 0 {
		o.Backends = Backends
	}
	if len(o.Callers) == 0 {
		o.Callers = []int{1, 16, 64}
	}
	if o.Ops <= 0 {
		o.Ops = 200
	}
	if o.Latency <= 0 {
		o.Latency = 5 * time.Millisecond
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "switchyard-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		o.Dir = d
	}
	var tables []Table
	for _, name := range o.Backends {
		be, err := lookup(name)
		if err != nil {
			return tables, err
		}
		t, err := runBackend(ctx, o, be)
		if err != nil {
			return tables, fmt.Errorf("%s: %w", name, err)
		}
		tables = append(tables, t)
	}
	return tables, nil
}

func runBackend(ctx context.Context, o Options, be backend) (Table, error) {
	dir := filepath.Join(o.Dir, be.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Table{}, err
	}
	defer os.RemoveAll(dir)
	t := Table{Backend: be.name, About: be.about, Slots: be.slots}
	var sim *simproc.Proc
	var h simproc.Hello
	if be.sim != nil {
		if o.Self == "" {
			return t, errors.New("no executable to run the simulator in (Options.Self)")
		}
		var err error
		sim, err = simproc.Start(o.Self, *be.sim(filepath.Join(dir, "host"), o.Latency), o.Stderr)
		if err != nil {
			return t, err
		}
		defer sim.Close()
		h, t.Latency = sim.Hello, o.Latency
	}
	d, err := startDriver(ctx, o.Switchyard, dir, be.main(dir, h), o.Stderr)
	if err != nil {
		return t, err
	}
	defer d.stop()
	params := h.Params
	// The first call connects, logs in and probes the host: not part of any row.
	if _, err := d.c.Controller.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: params}); err != nil {
		return t, fmt.Errorf("the first GetCapacity: %w", err)
	}
	for _, callers := range o.Callers {
		n := max(o.Ops, 2*callers)
		ids := make([]string, n)
		create := func(i int) error {
			r, err := d.c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("bench-c%d-%05d", callers, i),
				VolumeCapabilities: []*csipb.VolumeCapability{be.cap}, CapacityRange: &csipb.CapacityRange{RequiredBytes: 64 << 20}, Parameters: params})
			ids[i] = r.GetVolume().GetVolumeId()
			return err
		}
		remove := func(i int) error {
			_, err := d.c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: ids[i]})
			return err
		}
		for _, op := range []struct {
			name string
			f    func(int) error
		}{{"create", create}, {"delete", remove}} {
			r, err := measure(d.pid, sim, callers, n, op.f)
			if err != nil {
				return t, fmt.Errorf("%s at %d callers: %w", op.name, callers, err)
			}
			r.Op = op.name
			if sim != nil && r.RoundTrips > 0 {
				r.Bound = time.Duration(r.RoundTrips * float64(o.Latency))
				r.BoundPerSec = float64(min(callers, be.slots)) / r.Bound.Seconds()
			}
			t.Rows = append(t.Rows, r)
		}
	}
	return t, nil
}

// measure runs one batch and reads each side's figures around it.
func measure(driverPid int, sim *simproc.Proc, callers, n int, op func(int) error) (Row, error) {
	r := Row{Callers: callers, Ops: n}
	if sim != nil {
		if err := sim.Reset(); err != nil {
			return r, err
		}
	}
	d0, err := procstat.CPU(driverPid)
	if err != nil {
		return r, err
	}
	var s0 time.Duration
	var c0 simproc.Counts
	if sim != nil {
		if s0, err = sim.CPU(); err != nil {
			return r, err
		}
		if c0, err = sim.Counts(); err != nil {
			return r, err
		}
	}
	lat, wall, err := loadgen.Timed(n, callers, op)
	if err != nil {
		return r, err
	}
	d1, err := procstat.CPU(driverPid)
	if err != nil {
		return r, err
	}
	r.DriverCPU = (d1 - d0) / time.Duration(n)
	if sim != nil {
		s1, err := sim.CPU()
		if err != nil {
			return r, err
		}
		r.SimCPU = (s1 - s0) / time.Duration(n)
		c, err := sim.Counts()
		if err != nil {
			return r, err
		}
		r.RoundTrips = float64(c.RoundTrips()) / float64(n)
		r.Connections = c.Connections - c0.Connections
	}
	if r.DriverRSS, err = procstat.RSS(driverPid); err != nil {
		return r, err
	}
	r.PerSecond = float64(n) / wall.Seconds()
	slices.Sort(lat)
	r.P50, r.P99 = lat[n/2], lat[min(n-1, n*99/100)]
	return r, nil
}
