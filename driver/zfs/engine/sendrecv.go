package engine

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/transfer"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Clone and restore across connections (docs/proxy.md): the source
// engine's `zfs send` is streamed through the controller into the target
// engine's `zfs receive -s`, then the target finishes the received dataset
// exactly as it finishes a volume an earlier CreateVolume left half-made:
// its own properties, size, permissions and share.

// StreamExecutor is an executor that can run a command with its stdin and
// stdout attached as streams: zfs.SSH, zfs.SharedSSHExecutor (what
// NewCLIHost builds for an sshConnection) and zfs.Local. A host reached
// through an executor without it cannot stream, and the proxy says so.
type StreamExecutor interface {
	RunStream(ctx context.Context, line string, stdin io.Reader, stdout io.Writer) (zfs.Output, error)
}

// ZFSStreams runs zfs with streams attached.
type ZFSStreams interface {
	// ZFS runs `zfs args...`; stdin or stdout may be nil. A non-zero exit
	// is in the Output, not the error (as Executor.Run).
	ZFS(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) (zfs.Output, error)
}

// StreamingPlatform is a Platform whose host can stream; ZFSStreams is nil
// when it cannot.
type StreamingPlatform interface {
	ZFSStreams() ZFSStreams
}

// ZFSStreams is the CLI host's streaming zfs, nil unless its executor can
// stream.
func (h *CLIHost) ZFSStreams() ZFSStreams {
	se, ok := h.exec.(StreamExecutor)
	if !ok {
		return nil
	}
	return &cliStreams{h: h, se: se}
}

type cliStreams struct {
	h  *CLIHost
	se StreamExecutor
}

func (c *cliStreams) ZFS(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) (zfs.Output, error) {
	p := c.h.cfg.Paths
	if p.ZFS == "" {
		p.ZFS = zfs.DefaultPaths.ZFS
	}
	argv := append([]string{p.ZFS}, args...)
	if c.h.cfg.Sudo {
		argv = append([]string{c.h.SudoPath()}, argv...)
	}
	out, err := c.se.RunStream(ctx, zfs.Line(argv...), stdin, stdout)
	if err != nil {
		return out, transportErr(c.h.driver, err)
	}
	return out, nil
}

func (e *Engine) streams() ZFSStreams {
	if sp, ok := e.plat.(StreamingPlatform); ok {
		return sp.ZFSStreams()
	}
	return nil
}

// Stream formats: a filesystem stream cannot be received as a zvol.
const (
	FormatFilesystem = "zfs-filesystem"
	FormatVolume     = "zfs-volume"
)

var (
	_ backend.StreamSender   = (*Engine)(nil)
	_ backend.StreamReceiver = (*Engine)(nil)
)

// StreamFormat is "" when the host cannot stream (the proxy then refuses
// the pair, naming why).
func (e *Engine) StreamFormat() string {
	if e.streams() == nil {
		return ""
	}
	if e.cfg.kind == volume {
		return FormatVolume
	}
	return FormatFilesystem
}

// xferSnapshotPrefix names the temporary snapshot a volume source is sent
// from; the new volume's name follows, so a retry finds it again.
const xferSnapshotPrefix = "xfer-"

// SendSource prepares `zfs send` of a volume or snapshot source.
func (e *Engine) SendSource(ctx context.Context, cs *csi.VolumeContentSource, forName string) (transfer.Source, int64, func(), error) {
	zs := e.streams()
	if zs == nil {
		return nil, 0, nil, status.Errorf(codes.FailedPrecondition, "%s: this connection's host cannot stream zfs send", e.cfg.driver)
	}
	src, done, err := e.sourceSnapshot(ctx, cs, forName)
	if err != nil {
		return nil, 0, nil, err
	}
	props, err := e.zfs.Get(ctx, src.snap, "referenced")
	if err != nil {
		done()
		if zfs.IsNotExist(err) {
			return nil, 0, nil, status.Errorf(codes.NotFound, "source %s %q does not exist", src.kind, src.id)
		}
		return nil, 0, nil, e.zfsErr(err, "reading "+src.snap)
	}
	return &zfsSender{zs: zs, snap: src.snap, driver: e.cfg.driver}, props.Int("referenced"), done, nil
}

type zfsSender struct {
	zs           ZFSStreams
	snap, driver string
}

// Send runs `zfs send snap`, or `zfs send -t token` to resume.
func (s *zfsSender) Send(ctx context.Context, w io.Writer, resume string) error {
	args := []string{"send", s.snap}
	if resume != "" {
		args = []string{"send", "-t", resume}
	}
	out, err := s.zs.ZFS(ctx, args, nil, w)
	if err != nil {
		return err
	}
	if out.Code != 0 {
		return streamErr(s.driver, "zfs send", out)
	}
	return nil
}

// ReceiveVolume prepares `zfs receive -s` of the volume req names.
func (e *Engine) ReceiveVolume(ctx context.Context, req *csi.CreateVolumeRequest) (transfer.Sink, func(context.Context) (*csi.CreateVolumeResponse, error), error) {
	zs := e.streams()
	if zs == nil {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "%s: this connection's host cannot stream zfs receive", e.cfg.driver)
	}
	if req.GetVolumeContentSource() != nil {
		return nil, nil, status.Error(codes.Internal, "ReceiveVolume: the request must not carry a content source")
	}
	if why := e.checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return nil, nil, status.Error(codes.InvalidArgument, why)
	}
	id, err := volumeid.Volume(req.GetName(), e.cfg.idHash, MaxVolumeIDLen)
	if err != nil {
		return nil, nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ds := e.cfg.datasetName(id)
	sink := &zfsSink{e: e, zs: zs, ds: ds, name: req.GetName()}
	props, err := e.zfs.Get(ctx, ds, propManaged, propVolumeName, "receive_resume_token")
	switch {
	case zfs.IsNotExist(err):
	case err != nil:
		return nil, nil, e.zfsErr(err, "reading "+ds)
	case props[propManaged].Value == "true":
		if props[propVolumeName].Value != req.GetName() {
			return nil, nil, status.Errorf(codes.AlreadyExists, "dataset %s exists but was not made for volume %q", ds, req.GetName())
		}
		sink.received = true // an earlier call received and labelled it
	case tokenOf(props["receive_resume_token"].Value) == "":
		// Exists, unlabelled and not resumable: a receive that completed
		// just before the process stopped. Finishing labels it.
		sink.received = true
	}
	finish := func(ctx context.Context) (*csi.CreateVolumeResponse, error) { return e.finishReceived(ctx, ds, req) }
	return sink, finish, nil
}

// finishReceived labels the received dataset as this volume's, removes the
// snapshot it arrived with, and lets CreateVolume complete it: size,
// permissions, share and provision_success, as for any fresh volume.
func (e *Engine) finishReceived(ctx context.Context, ds string, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	props, err := e.zfs.Get(ctx, ds, propSuccess)
	if err != nil {
		return nil, e.zfsErr(err, "reading "+ds)
	}
	if props[propSuccess].Value != "true" {
		if err := e.zfs.Set(ctx, ds, e.baseProps(req.GetName(), req.GetParameters(), true)...); err != nil {
			return nil, e.zfsErr(err, "labelling "+ds)
		}
		snaps, err := e.zfs.List(ctx, ds, zfs.ListOptions{Depth: 1, Types: []string{"snapshot"}})
		if err != nil {
			return nil, e.zfsErr(err, "listing the snapshots of "+ds)
		}
		for _, s := range snaps {
			if err := e.zfs.Destroy(ctx, s.Name, zfs.DestroyOptions{}); err != nil && !zfs.IsNotExist(err) {
				return nil, e.zfsErr(err, "removing "+s.Name)
			}
		}
	}
	return e.CreateVolume(ctx, req)
}

type zfsSink struct {
	e        *Engine
	zs       ZFSStreams
	ds, name string
	received bool
}

func (k *zfsSink) Receive(ctx context.Context, r io.Reader) error {
	if k.received {
		return nil // transfer.Copy does not stream into a Complete sink
	}
	// zfs receive makes the dataset, not its parents (a new connection's
	// parent may not exist yet, as before its first CreateVolume).
	if err := k.e.zfs.Create(ctx, k.e.cfg.parent, zfs.CreateOptions{Parents: true}); err != nil && !zfs.IsExists(err) {
		return k.e.zfsErr(err, "creating "+k.e.cfg.parent)
	}
	out, err := k.zs.ZFS(ctx, []string{"receive", "-s", k.ds}, r, nil)
	if err != nil {
		return err
	}
	if out.Code != 0 {
		return streamErr(k.e.cfg.driver, "zfs receive", out)
	}
	return nil
}

// Complete reports a target an earlier call received already.
func (k *zfsSink) Complete() bool { return k.received }

func (k *zfsSink) ResumeToken(ctx context.Context) (string, error) {
	if k.received {
		return "", nil
	}
	props, err := k.e.zfs.Get(ctx, k.ds, "receive_resume_token")
	if zfs.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", k.e.zfsErr(err, "reading the resume token of "+k.ds)
	}
	return tokenOf(props["receive_resume_token"].Value), nil
}

// Abort discards a partial receive (zfs receive -A) and removes the
// target unless an earlier call finished it.
func (k *zfsSink) Abort(ctx context.Context) error {
	props, err := k.e.zfs.Get(ctx, k.ds, propSuccess)
	if zfs.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return k.e.zfsErr(err, "reading "+k.ds)
	}
	if props[propSuccess].Value == "true" {
		return nil
	}
	if out, err := k.zs.ZFS(ctx, []string{"receive", "-A", k.ds}, nil, nil); err != nil {
		return err
	} else if out.Code != 0 && !strings.Contains(out.Stderr, "does not have any resumable receive state") {
		k.e.log.Debug("zfs receive -A", "dataset", k.ds, "stderr", out.Stderr)
	}
	if err := k.e.zfs.Destroy(ctx, k.ds, zfs.DestroyOptions{Recursive: true}); err != nil && !zfs.IsNotExist(err) {
		return k.e.zfsErr(err, "removing the partial copy "+k.ds)
	}
	k.received = false
	return nil
}

func tokenOf(v string) string {
	if v == "-" {
		return ""
	}
	return v
}

// streamErr is a failed zfs send or receive: out of space is
// RESOURCE_EXHAUSTED (the copy is not retried), the rest INTERNAL with
// zfs's words.
func streamErr(driver, cmd string, out zfs.Output) error {
	zerr := &zfs.Error{Command: cmd, Stderr: out.Stderr, Code: out.Code}
	msg := strings.TrimSpace(out.Stderr)
	if zfs.IsOutOfSpace(zerr) {
		return status.Errorf(codes.ResourceExhausted, "%s: %s: %s", driver, cmd, msg)
	}
	if zfs.IsNotExist(zerr) {
		return status.Errorf(codes.NotFound, "%s: %s: %s", driver, cmd, msg)
	}
	return status.Errorf(codes.Internal, "%s: %s exited %d: %s", driver, cmd, out.Code, msg)
}

// defaultCleanupTimeout bounds removing a temporary snapshot after a copy.
const defaultCleanupTimeout = 30 * time.Second

// The executors CLIHost builds stream.
var (
	_ StreamExecutor = (*zfs.SharedSSHExecutor)(nil)
	_ StreamExecutor = (*zfs.SSH)(nil)
	_ StreamExecutor = (*zfs.Local)(nil)
)
