package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/transfer"
)

// CollectTimeout is how long a finished copy waits for the CreateVolume
// retry that collects it. A PVC deleted while its copy ran is never asked
// for again; its volume would leak, so it is deleted after this.
var CollectTimeout = 10 * time.Minute

// copyJob is one running (or finished, uncollected) cross-connection copy.
type copyJob struct {
	// conn and id are the target connection and the id the new volume
	// will have there: a DeleteVolume of that volume cancels the copy.
	conn, id string
	cancel   context.CancelFunc
	done     chan struct{}
	counter  transfer.Counter
	resp     *csipb.CreateVolumeResponse
	err      error
	timer    *time.Timer // deletes an uncollected result
}

type copyJobs struct {
	mu   sync.Mutex
	jobs map[string]*copyJob
}

// createAcross makes the volume of fwd (whose content source holds the
// backend's own id on connection srcConn) on dst by streaming the source
// through the controller. It runs in the background: a call that does not
// see it finish answers ABORTED with the progress, and the sidecar's retry
// (same name) waits on the same copy and gets the volume.
func (p *Controller) createAcross(ctx context.Context, dst *Lease, srcConn string, fwd *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	name := fwd.GetName()
	p.copies.mu.Lock()
	if p.copies.jobs == nil {
		p.copies.jobs = map[string]*copyJob{}
	}
	job := p.copies.jobs[name]
	p.copies.mu.Unlock()
	if job == nil {
		src, err := p.conns.Acquire(ctx, srcConn, false)
		if err != nil {
			return nil, err
		}
		sender, receiver, err := p.streamPair(src, dst)
		if err != nil {
			src.Release()
			return nil, err
		}
		if err := p.roomFor(ctx, dst, fwd); err != nil {
			src.Release()
			return nil, err
		}
		id, _ := derivedID(dst, name)
		job = &copyJob{conn: dst.Name, id: id, done: make(chan struct{})}
		p.copies.mu.Lock()
		if other := p.copies.jobs[name]; other != nil { // lost a race: wait on that one
			job = other
			src.Release()
		} else {
			p.copies.jobs[name] = job
			dstLease, _ := p.conns.Acquire(ctx, dst.Name, false) // held by the job; same instance, cannot fail now
			// The copy outlives this call: its context keeps the call's
			// values but not its deadline; a DeleteVolume of its target
			// cancels it.
			cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			job.cancel = cancel
			go p.runCopy(cctx, job, src, dstLease, sender, receiver, proto.Clone(fwd).(*csipb.CreateVolumeRequest))
		}
		p.copies.mu.Unlock()
	}
	select {
	case <-job.done:
	case <-ctx.Done():
		return nil, status.Errorf(codes.Aborted, "CreateVolume: copy of %s from connection %s to %s in progress: %d%% (%d bytes); retry", name, srcConn, dst.Name, job.counter.Percent(), job.counter.Bytes())
	}
	p.copies.mu.Lock()
	if p.copies.jobs[name] == job {
		delete(p.copies.jobs, name)
		job.timer.Stop()
	}
	p.copies.mu.Unlock()
	if job.err != nil {
		return nil, job.err
	}
	return proto.Clone(job.resp).(*csipb.CreateVolumeResponse), nil
}

// runCopy does the copy with a context of its own: the call that started
// it ends long before a large copy does.
func (p *Controller) runCopy(ctx context.Context, job *copyJob, src, dst *Lease, sender backend.StreamSender, receiver backend.StreamReceiver, fwd *csipb.CreateVolumeRequest) {
	defer src.Release()
	defer dst.Release()
	what := fmt.Sprintf("%s -> %s/%s", srcDesc(src.Name, fwd.GetVolumeContentSource()), dst.Name, fwd.GetName())
	job.resp, job.err = p.copyOnce(ctx, job, src, dst, sender, receiver, fwd, what)
	job.cancel()
	p.copies.mu.Lock()
	job.timer = time.AfterFunc(CollectTimeout, func() { p.dropUncollected(fwd.GetName(), job, dst.Name) })
	p.copies.mu.Unlock()
	close(job.done)
}

// cancelCopyTo stops a running copy whose new volume is id on connection
// conn, and waits until it has removed its partial target: a CO that gave
// up on the volume (a PVC deleted while it was copied) deletes it, and the
// copy must not make it again afterwards.
func (p *Controller) cancelCopyTo(ctx context.Context, conn, id string) error {
	p.copies.mu.Lock()
	var job *copyJob
	var name string
	for n, j := range p.copies.jobs {
		if j.conn == conn && j.id == id && id != "" {
			job, name = j, n
		}
	}
	p.copies.mu.Unlock()
	if job == nil {
		return nil
	}
	job.cancel()
	select {
	case <-job.done:
	case <-ctx.Done():
		return status.Errorf(codes.DeadlineExceeded, "DeleteVolume: the copy making volume %s on connection %s is still stopping; retry", id, conn)
	}
	p.copies.mu.Lock()
	if p.copies.jobs[name] == job {
		delete(p.copies.jobs, name)
		job.timer.Stop()
	}
	p.copies.mu.Unlock()
	p.log.Info("a copy across connections was cancelled by DeleteVolume of its target", "connection", conn, "volume", id)
	return nil
}

func (p *Controller) copyOnce(ctx context.Context, job *copyJob, src, dst *Lease, sender backend.StreamSender, receiver backend.StreamReceiver, fwd *csipb.CreateVolumeRequest, what string) (*csipb.CreateVolumeResponse, error) {
	stream, size, done, err := sender.SendSource(ctx, fwd.GetVolumeContentSource(), fwd.GetName())
	if err != nil {
		if status.Code(err) == codes.NotFound {
			// The source went away, perhaps after an earlier process had
			// copied part of it: that partial target can never finish.
			p.dropPartial(ctx, dst, receiver, fwd, what)
		}
		return nil, backendErr(src, "CreateVolume (sending the source)", err)
	}
	defer done()
	target := proto.Clone(fwd).(*csipb.CreateVolumeRequest)
	target.VolumeContentSource = nil
	sink, finish, err := receiver.ReceiveVolume(ctx, target)
	if err != nil {
		return nil, backendErr(dst, "CreateVolume (receiving the copy)", err)
	}
	p.log.Info("copying a volume across connections", "copy", what, "bytes", size)
	start := time.Now()
	opts := transfer.Options{Total: size, Log: p.log, What: what}
	obs := p.conns.copyObserver()
	if obs != nil {
		var last int64 // Progress is called from the one sending goroutine
		opts.Progress = func(total int64) {
			obs.CopyProgress(dst.Name, total-last)
			last = total
		}
	}
	err = transfer.Copy(ctx, stream, sink, opts, &job.counter)
	if obs != nil {
		obs.CopyFinished(dst.Name, err)
	}
	if err != nil {
		return nil, status.Errorf(status.Code(err), "CreateVolume: copying %s: %s", what, status.Convert(err).Message())
	}
	resp, err := finish(ctx)
	if err != nil {
		return nil, backendErr(dst, "CreateVolume (finishing the copy)", err)
	}
	secs := time.Since(start).Seconds()
	p.log.Info("copy across connections done", "copy", what, "bytes", job.counter.Bytes(), "seconds", secs, "MBps", float64(job.counter.Bytes())/1e6/max(secs, 1e-9))
	return resp, nil
}

// dropPartial removes a partial target an earlier copy of fwd left on
// dst (a finished volume is never touched: the sink's Abort keeps it).
func (p *Controller) dropPartial(ctx context.Context, dst *Lease, receiver backend.StreamReceiver, fwd *csipb.CreateVolumeRequest, what string) {
	target := proto.Clone(fwd).(*csipb.CreateVolumeRequest)
	target.VolumeContentSource = nil
	sink, _, err := receiver.ReceiveVolume(ctx, target)
	if err == nil {
		err = sink.Abort(ctx)
	}
	if err != nil {
		p.log.Warn("the source of a copy is gone; could not remove the partial target", "copy", what, "connection", dst.Name, "error", err)
	}
}

// dropUncollected deletes the volume of a copy no retry came back for.
func (p *Controller) dropUncollected(name string, job *copyJob, conn string) {
	p.copies.mu.Lock()
	mine := p.copies.jobs[name] == job
	if mine {
		delete(p.copies.jobs, name)
	}
	p.copies.mu.Unlock()
	if !mine || job.err != nil || job.resp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := p.conns.Acquire(ctx, conn, false)
	if err == nil {
		_, err = l.Driver.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: job.resp.GetVolume().GetVolumeId()})
		l.Release()
	}
	p.log.Warn("a volume copied across connections was never collected (PVC deleted?); deleted it", "connection", conn, "volume", job.resp.GetVolume().GetVolumeId(), "error", err)
}

// streamPair decides whether src can be copied into dst, and if not says
// why and what to do.
func (p *Controller) streamPair(src, dst *Lease) (backend.StreamSender, backend.StreamReceiver, error) {
	if sb, ok := dirBase(src); ok {
		if db, ok := dirBase(dst); ok {
			return dirSender{base: sb, l: src}, dirReceiver{base: db, l: dst}, nil
		}
	}
	if rs, rr, ok := replicaPair(src, dst); ok {
		return rs, rr, nil
	}
	sender, okS := src.Driver.(backend.StreamSender)
	receiver, okR := dst.Driver.(backend.StreamReceiver)
	// "" is a backend that could stream but whose host cannot (yet).
	noHost := ""
	for _, c := range []struct {
		ok   bool
		l    *Lease
		kind string
	}{{okS, src, "send"}, {okR, dst, "receive"}} {
		if c.ok && streamFormat(c.l.Driver) == "" && noHost == "" {
			noHost = fmt.Sprintf("connection %s (%s) cannot %s a stream in this build: its host is reached through an executor without a streaming mode (docs/proxy.md, \"Limits of this build\")", c.l.Name, c.l.Type.Name, c.kind)
		}
	}
	okS = okS && sender.StreamFormat() != ""
	okR = okR && receiver.StreamFormat() != ""
	if okS && okR && sender.StreamFormat() == receiver.StreamFormat() {
		return sender, receiver, nil
	}
	fs, fd := familyOf(src.Type.Name), familyOf(dst.Type.Name)
	across := fmt.Sprintf("CreateVolume: the source is on connection %s (%s), the new volume on %s (%s)", src.Name, src.Type.Name, dst.Name, dst.Type.Name)
	switch {
	case isTrueNASAPI(src.Type.Name) || isTrueNASAPI(dst.Type.Name):
		return nil, nil, status.Errorf(codes.FailedPrecondition, "%s: %s", across, trueNASMessage(src, dst))
	case okS && okR:
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s: their streams differ (%s vs %s): a filesystem cannot be received as a zvol or the other way round; use a target of the same kind", across, sender.StreamFormat(), receiver.StreamFormat())
	case fs.block != fd.block:
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s: a %s volume cannot become a %s volume; use a target connection of the same kind", across, kindOf(fs), kindOf(fd))
	case noHost != "" && fs == fd:
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s: %s", across, noHost)
	case fs.block:
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s: block volumes move between different block backends only as ZFS streams (both connections zfs-generic-*/freenas-* over SSH); copying a raw device would need both attached to the controller, which switchyard does not do. Copy inside the cluster instead: a pod with both volumes and dd", across)
	}
	// INVALID_ARGUMENT, like a method a backend lacks: this pair of
	// connections cannot serve the request, whatever is retried.
	if !fs.block && !fd.block {
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s: the controller copies files only between directory backends (local-hostpath, nfs-client, smb-client, lustre-client), whose controllerBasePath it holds, and streams ZFS datasets only between ZFS connections over SSH; %s cannot send or %s cannot receive that way, and the controller mounts no share of its own. Copy the data inside the cluster instead: a pod with both volumes and rsync", across, src.Type.Name, dst.Type.Name)
	}
	return nil, nil, status.Errorf(codes.InvalidArgument, "%s: this pair cannot stream a volume (%s cannot send, or %s cannot receive); copy the data inside the cluster instead: a pod with both volumes and rsync", across, src.Type.Name, dst.Type.Name)
}

func streamFormat(d backend.Driver) string {
	if s, ok := d.(backend.StreamSender); ok {
		return s.StreamFormat()
	}
	if r, ok := d.(backend.StreamReceiver); ok {
		return r.StreamFormat()
	}
	return ""
}

func isTrueNASAPI(typ string) bool { return strings.Contains(typ, "-api-") }

func kindOf(f family) string {
	if f.block {
		return "block"
	}
	return "file"
}

func srcDesc(conn string, src *csipb.VolumeContentSource) string {
	if s := src.GetSnapshot(); s != nil {
		return conn + "/" + s.GetSnapshotId()
	}
	return conn + "/" + src.GetVolume().GetVolumeId()
}

// roomFor checks the target has room before anything is copied.
func (p *Controller) roomFor(ctx context.Context, dst *Lease, req *csipb.CreateVolumeRequest) error {
	free, err := p.freeBytes(ctx, dst, req.GetParameters(), req.GetVolumeCapabilities(), nil)
	if err != nil {
		return backendErr(dst, "GetCapacity", err)
	}
	if need := requestedBytes(req.GetCapacityRange()); free < need {
		return status.Errorf(codes.ResourceExhausted, "CreateVolume: connection %s has %d bytes free; the copy needs %d", dst.Name, free, need)
	}
	return nil
}
