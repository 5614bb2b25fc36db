// Package soak is the chaos soak: many volume lifecycles run by several
// concurrent callers through one switchyard proxy deployment over every
// simulated storage host at once, while the hosts fail calls, slow down,
// drop connections and restart, and (with Kill) the driver process itself
// is killed mid-call. The caller behaves like the external-provisioner: it
// retries a failed call with the same name or id until it succeeds or gets
// a terminal code, and remembers what the CO believes exists. At the end a
// leak checker lists every object on every host through the simulators'
// in-process state and compares it with that belief.
package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/simulators/faults"
)

// Options configure a soak run.
type Options struct {
	Lifecycles int     // volume lifecycles to run (default 100)
	Callers    int     // concurrent callers (default 8)
	Seed       uint64  // the plan, the fault schedule and the simulators' error draws
	FaultRate  float64 // probability that one simulator operation fails (0.1 = 10 %)
	// Faults arms latency spikes, dropped connections and simulator
	// restarts besides the error rate (default on; see NoChaos).
	NoChaos bool
	// Kill runs the switchyard binary (Switchyard) as a subprocess and
	// kills it with SIGKILL mid-call now and then; otherwise the driver
	// runs in-process.
	Kill       bool
	Switchyard string
	// Dir is the scratch folder (default: a new temporary one, removed
	// at the end unless Keep).
	Dir  string
	Keep bool
	// Log receives the driver's warnings and errors (nil: discarded).
	Log io.Writer
	// Progress receives a line now and then (nil: none).
	Progress io.Writer

	// stopBeforeDelete ends each lifecycle before its deletions (the leak
	// checker's own test).
	stopBeforeDelete bool
	// planAll takes the connections in turn instead of drawing them.
	planAll bool
}

// Report is what a run found.
type Report struct {
	Seed       uint64
	Lifecycles int
	Completed  int
	Wall       time.Duration
	// Calls counts answers by call and code ("CreateVolume" → "OK" → n),
	// the driver's answers only; Transport counts the gRPC client's own
	// errors while the driver was down (Kill).
	Calls     map[string]map[string]int
	Transport map[string]int
	// Causes counts error answers by code and the fault their message
	// points at ("UNAVAILABLE" → "connection" → n).
	Causes  map[string]map[string]int
	Retries int
	// Faults counts what was injected, by kind.
	Faults map[string]int64
	// Undocumented are answers whose code the docs do not list for the call.
	Undocumented []string
	// Failed are lifecycles that ended on a terminal code or ran out of
	// attempts.
	Failed []string
	Leaked []string
	Lost   []string
}

// OK is true when nothing leaked or was lost, every code was documented
// and every lifecycle finished.
func (r *Report) OK() bool {
	return len(r.Leaked) == 0 && len(r.Lost) == 0 && len(r.Undocumented) == 0 && len(r.Failed) == 0
}

// Run performs a soak.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Lifecycles <= 0 {
		o.Lifecycles = 100
	}
	if o.Callers <= 0 {
		o.Callers = 8
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "switchyard-soak-")
		if err != nil {
			return nil, err
		}
		dir = d
		if !o.Keep {
			defer os.RemoveAll(dir)
		}
	}
	start := time.Now()
	h, err := startHosts(dir, o.FaultRate)
	if err != nil {
		return nil, err
	}
	defer h.close()
	n := uint64(0)
	h.each(func(_ string, f *faults.Set) { n++; f.Seed(o.Seed*1000 + n) })
	mainFile, err := writeConfigs(dir, h)
	if err != nil {
		return nil, err
	}
	var p *plugin
	if o.Kill {
		p, err = startProcess(o.Switchyard, dir, mainFile, o.Log)
	} else {
		p, err = startInProcess(dir, mainFile, o.Log)
	}
	if err != nil {
		return nil, err
	}
	defer p.stop()
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	info, err := c.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("NodeGetInfo: %w", err)
	}

	s := &run{o: o, c: c, nodeID: info.GetNodeId(), belief: newBelief(),
		rep: &Report{Seed: o.Seed, Lifecycles: o.Lifecycles, Calls: map[string]map[string]int{}, Transport: map[string]int{},
			Causes: map[string]map[string]int{}, Faults: map[string]int64{}}}
	plan := rand.New(rand.NewPCG(o.Seed, 0x50a4))
	jobs := make(chan job, o.Lifecycles)
	for i := range o.Lifecycles {
		cn := conns[plan.IntN(len(conns))]
		if o.planAll {
			cn = conns[i%len(conns)]
		}
		jobs <- job{i: i, conn: cn, snapFirst: plan.IntN(2) == 0}
	}
	close(jobs)

	chaosCtx, stopChaos := context.WithCancel(ctx)
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		s.chaos(chaosCtx, h, p)
	}()
	var wg sync.WaitGroup
	for range o.Callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if ctx.Err() != nil {
					return
				}
				s.lifecycle(ctx, j)
				if n := s.done.Add(1); n%50 == 0 {
					fmt.Fprintf(o.Progress, "soak: %d/%d lifecycles (%s)\n", n, o.Lifecycles, time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	wg.Wait()
	stopChaos()
	<-chaosDone
	h.quiet()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fc := h.counts()
	s.rep.Faults["injected-error"] = fc.Errors
	s.rep.Faults["dropped-connection"] = fc.Drops
	s.rep.Faults["delayed-operation"] = fc.Delayed
	s.rep.Completed = int(s.completed.Load())
	s.rep.Leaked, s.rep.Lost = checkLeaks(h, dir, s.belief)
	if s.o.stopBeforeDelete {
		s.rep.Leaked, s.rep.Lost = checkLeaks(h, dir, newBelief()) // nothing believed: all of it is a leak
		s.rep.Lost = checkLost(h, dir, s.belief)
	}
	s.rep.Wall = time.Since(start)
	return s.rep, nil
}

// job is one lifecycle of the plan.
type job struct {
	i         int
	conn      conn
	snapFirst bool // delete the snapshot before the clone made from it
}

// run is a soak in progress.
type run struct {
	o      Options
	c      *csiclient.Client
	nodeID string
	belief *belief

	mu        sync.Mutex
	rep       *Report
	done      atomic.Int64
	completed atomic.Int64
}

const gib = 1 << 30

// lifecycle: create, snapshot, clone from the snapshot, expand, publish
// where the connection has it, then delete everything.
func (s *run) lifecycle(ctx context.Context, j job) {
	cn := j.conn
	base := fmt.Sprintf("soak-%d-%d", s.o.Seed, j.i)
	vcap := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	if cn.Block {
		vcap.AccessType = &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}
	}
	params := map[string]string{"connection": cn.Name}
	if cn.Sim == simInfinia {
		params["service"] = "red/csiService"
	}
	create := func(name string, src *csipb.VolumeContentSource) (string, bool) {
		var id string
		ok := s.call(ctx, "CreateVolume", name, func(cctx context.Context) error {
			r, err := s.c.Controller.CreateVolume(cctx, &csipb.CreateVolumeRequest{Name: name, Parameters: params,
				CapacityRange: &csipb.CapacityRange{RequiredBytes: gib}, VolumeCapabilities: []*csipb.VolumeCapability{vcap},
				VolumeContentSource: src})
			id = r.GetVolume().GetVolumeId()
			return err
		})
		if ok {
			s.belief.add(cn.Name, kindVolume, name, id)
		}
		return id, ok
	}
	deleteVolume := func(name, id string) bool {
		ok := s.call(ctx, "DeleteVolume", name, func(cctx context.Context) error {
			_, err := s.c.Controller.DeleteVolume(cctx, &csipb.DeleteVolumeRequest{VolumeId: id})
			return err
		})
		if ok {
			s.belief.remove(cn.Name, kindVolume, name)
		}
		return ok
	}
	deleteSnapshot := func(name, id string) bool {
		ok := s.call(ctx, "DeleteSnapshot", name, func(cctx context.Context) error {
			_, err := s.c.Controller.DeleteSnapshot(cctx, &csipb.DeleteSnapshotRequest{SnapshotId: id})
			return err
		})
		if ok {
			s.belief.remove(cn.Name, kindSnapshot, name)
		}
		return ok
	}

	srcName := base + "-src"
	src, ok := create(srcName, nil)
	if !ok {
		return
	}
	var snapName, snapID, cloneName, cloneID string
	if cn.Snapshots {
		snapName = base + "-snap"
		if !s.call(ctx, "CreateSnapshot", snapName, func(cctx context.Context) error {
			r, err := s.c.Controller.CreateSnapshot(cctx, &csipb.CreateSnapshotRequest{Name: snapName, SourceVolumeId: src})
			snapID = r.GetSnapshot().GetSnapshotId()
			return err
		}) {
			return
		}
		s.belief.add(cn.Name, kindSnapshot, snapName, snapID)
		cloneName = base + "-clone"
		if cloneID, ok = create(cloneName, &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snapID}}}); !ok {
			return
		}
	}
	if !s.call(ctx, "ControllerExpandVolume", srcName, func(cctx context.Context) error {
		_, err := s.c.Controller.ControllerExpandVolume(cctx, &csipb.ControllerExpandVolumeRequest{VolumeId: src,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: vcap})
		return err
	}) {
		return
	}
	if cn.Publish {
		if !s.call(ctx, "ControllerPublishVolume", srcName, func(cctx context.Context) error {
			_, err := s.c.Controller.ControllerPublishVolume(cctx, &csipb.ControllerPublishVolumeRequest{VolumeId: src, NodeId: s.nodeID, VolumeCapability: vcap})
			return err
		}) {
			return
		}
		s.belief.add(cn.Name, kindGrant, srcName, s.nodeID)
		if !s.call(ctx, "ControllerUnpublishVolume", srcName, func(cctx context.Context) error {
			_, err := s.c.Controller.ControllerUnpublishVolume(cctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: src, NodeId: s.nodeID})
			return err
		}) {
			return
		}
		s.belief.remove(cn.Name, kindGrant, srcName)
	}
	if s.o.stopBeforeDelete {
		s.completed.Add(1)
		return
	}
	if cn.Snapshots {
		if j.snapFirst {
			if !deleteSnapshot(snapName, snapID) || !deleteVolume(cloneName, cloneID) {
				return
			}
		} else if !deleteVolume(cloneName, cloneID) || !deleteSnapshot(snapName, snapID) {
			return
		}
	}
	if !deleteVolume(srcName, src) {
		return
	}
	s.completed.Add(1)
}

// maxAttempts bounds the retries of one call; a call that needs more is a
// failed lifecycle (the external-provisioner would go on for ever).
const maxAttempts = 60

// call runs fn until it succeeds or answers a terminal code, counting
// every answer; it reports whether it succeeded.
func (s *run) call(ctx context.Context, method, name string, fn func(context.Context) error) bool {
	backoff := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := fn(cctx)
		cancel()
		if ctx.Err() != nil {
			return false
		}
		st, _ := status.FromError(err)
		code := st.Code()
		s.mu.Lock()
		if err != nil && transportError(code, st.Message()) {
			s.rep.Transport[method]++
		} else {
			if s.rep.Calls[method] == nil {
				s.rep.Calls[method] = map[string]int{}
			}
			s.rep.Calls[method][codeName(code)]++
			if !isDocumented(method, code) {
				s.rep.Undocumented = append(s.rep.Undocumented, fmt.Sprintf("%s %s: %s %s", method, name, codeName(code), st.Message()))
			}
			if err != nil {
				cs := codeName(code)
				if s.rep.Causes[cs] == nil {
					s.rep.Causes[cs] = map[string]int{}
				}
				s.rep.Causes[cs][cause(st.Message())]++
			}
		}
		if err == nil {
			s.mu.Unlock()
			return true
		}
		if terminal(code) || attempt >= maxAttempts {
			s.rep.Failed = append(s.rep.Failed, fmt.Sprintf("%s %s after %d attempts: %s %s", method, name, attempt, codeName(code), st.Message()))
			s.mu.Unlock()
			return false
		}
		s.rep.Retries++
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

func codeName(c codes.Code) string {
	if c == codes.OK {
		return "OK"
	}
	return strings.ToUpper(strings.ReplaceAll(camelToSnake(c.String()), " ", "_"))
}

func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
