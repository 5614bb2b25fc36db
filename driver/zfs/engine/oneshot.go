package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// One round trip per call. Over SSH every exec costs a network round trip
// (and, on a busy host, a login shell), so the steady-state calls send one
// compound program each instead of one command per step. The programs are
// plain sequential lists ("a; b"): no command substitution, conditionals
// or variables, so every POSIX shell (and the lab's simulator, which
// refuses the rest) reads them alike, and every value is quoted by
// zfs.Line. Each step's outcome is read back from the output: zfs's own
// messages on stderr, `zfs get` rows on stdout. Whatever the program could
// not decide (a half-made volume, a conflict, a guess that was wrong) falls
// back to the step-by-step path, which keeps the old semantics.

// PropertySharer is a Sharer whose Create runs nothing on the host (the
// share is the dataset's own properties, e.g. sharenfs): its volume_context
// and properties can be written by the same `zfs create` that makes the
// volume, so a new volume takes one exec.
type PropertySharer interface {
	Sharer
	// PropertiesOnly marks the sharer; it is never called.
	PropertiesOnly()
}

// programs is the compound-program runner: the zfs command line of a CLI
// host. Platforms whose Datasets are an API (TrueNAS) have none.
func (e *Engine) programs() (*zfs.CLI, bool) {
	c, ok := e.zfs.(*zfs.CLI)
	return c, ok
}

// parentMount caches the mountpoint of zfs.datasetParentName, from which a
// new filesystem's mountpoint (and so its NFS share path) is predicted. It
// is learnt from GetCapacity or a create's read-back, and checked against
// every new volume's read-back, so a changed parent is noticed at once.
type parentMount struct{ p atomic.Pointer[string] }

func (m *parentMount) get() (string, bool) {
	if p := m.p.Load(); p != nil {
		return *p, true
	}
	return "", false
}

func (m *parentMount) set(mp string) {
	if usableMountpoint(mp) {
		m.p.Store(&mp)
	} else {
		m.p.Store(nil)
	}
}

// learnParentMount records the parent's mountpoint from a volume's own
// when the volume inherits it.
func (e *Engine) learnParentMount(id string, props zfs.Properties) {
	mp := props["mountpoint"]
	if mp.Source == "local" || !strings.HasSuffix(mp.Value, "/"+id) {
		return
	}
	parent := strings.TrimSuffix(mp.Value, "/"+id)
	if parent == "" {
		parent = "/"
	}
	e.parentMnt.set(parent)
}

// predictedMount is where a new filesystem volume will be mounted, when it
// is known without asking the host.
func (e *Engine) predictedMount(id string) (string, bool) {
	parent, ok := e.parentMnt.get()
	if !ok {
		return "", false
	}
	for _, p := range e.cfg.datasetProps {
		if p.name == "mountpoint" { // a templated mountpoint: not predicted
			return "", false
		}
	}
	if parent == "/" {
		return "/" + id, true
	}
	return parent + "/" + id, true
}

// createOneShot makes a new, empty filesystem volume with a property share
// in one exec: `zfs create -p` with every property, the share's included
// and provision_success set, then `zfs get` of the volume. ok is false when
// the volume cannot be made this way (the caller takes the step-by-step
// path); an existing volume (a retry) is answered from the same read-back.
func (e *Engine) createOneShot(ctx context.Context, id, ds string, size int64, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, bool, error) {
	cli, ok := e.programs()
	if !ok || e.cfg.kind != filesystem || req.GetVolumeContentSource() != nil || !e.permissions().IsZero() {
		return nil, false, nil
	}
	if _, ok := e.share.(PropertySharer); !ok {
		return nil, false, nil
	}
	mp, ok := e.predictedMount(id)
	if !ok {
		return nil, false, nil
	}
	name := req.GetName()
	vc, shareProps, err := e.share.Create(ctx, ShareRequest{ID: id, Dataset: ds, Name: name, Params: req.GetParameters(), Mountpoint: mp})
	if err != nil {
		return nil, true, err
	}
	raw, _ := json.Marshal(vc)
	props := append(e.newFilesystemProps(name, req.GetParameters(), size), shareProps...)
	props = append(props, zfs.Prop{Name: propPredictedMount, Value: mp},
		zfs.Prop{Name: propShareContext, Value: string(raw)}, zfs.Prop{Name: propSuccess, Value: "true"})
	out, err := cli.RunProgram(ctx,
		cli.ZFSLine(zfs.CreateArgs(ds, zfs.CreateOptions{Parents: true, Props: props})...),
		cli.ZFSLine(zfs.GetArgs(ds, e.volumeProps()...)...))
	if errors.Is(err, zfs.ErrProgramTooLong) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, transportErr(e.cfg.driver, err)
	}
	got, perr := zfs.ParseGet(out.Stdout)
	if perr != nil || len(got) == 0 {
		// The read-back failed, so the create did: its message is what
		// is left of stderr once the read-back's own is removed.
		msg := zfs.StderrOf(out.Stderr, ds)
		if msg == "" {
			msg = strings.TrimSpace(out.Stderr + out.Stdout)
		}
		return nil, true, e.zfsErr(&zfs.Error{Command: "zfs create", Stderr: msg, Code: out.Code}, "creating "+ds)
	}
	// Made now or by an earlier call (zfs create -p leaves an existing
	// dataset alone): the same checks as any existing volume.
	if err := e.checkExisting(ds, name, got, req, nil); err != nil {
		return nil, true, err
	}
	e.learnParentMount(id, got)
	if got[propSuccess].Value != "true" {
		// Left half-made by an earlier step-by-step call: finish it so.
		return nil, false, nil
	}
	return e.answerExisting(ctx, id, ds, name, got, req, &writtenContext{raw: string(raw), vc: vc})
}

// newFilesystemProps are the creation properties of a new empty filesystem
// volume: the base ones and its size.
func (e *Engine) newFilesystemProps(name string, params map[string]string, size int64) []zfs.Prop {
	props := e.baseProps(name, params, false)
	if e.cfg.quotas {
		props = append(props, zfs.Prop{Name: "refquota", Value: strconv.FormatInt(size, 10)})
	}
	if e.cfg.reservation {
		props = append(props, zfs.Prop{Name: "refreservation", Value: strconv.FormatInt(size, 10)})
	}
	return props
}

// answerExisting answers for a provisioned volume. A volume whose share
// context a one-exec create wrote for a predicted mountpoint that turned
// out wrong (the parent's mountpoint changed) has it corrected here, by
// this call or by the retry of one cut short: only such a volume
// (propPredictedMount set, and not its mountpoint) is changed. w is the
// share context this call wrote, if it wrote one (else nil).
func (e *Engine) answerExisting(ctx context.Context, id, ds, name string, props zfs.Properties, req *csi.CreateVolumeRequest, w *writtenContext) (*csi.CreateVolumeResponse, bool, error) {
	guess, actual := props[propPredictedMount], props["mountpoint"].Value
	if _, ok := e.share.(PropertySharer); ok && e.cfg.kind == filesystem && guess.IsSet() && guess.Value != actual {
		want, shareProps, err := e.share.Create(ctx, ShareRequest{ID: id, Dataset: ds, Name: name, Params: req.GetParameters(), Mountpoint: actual})
		if err != nil {
			return nil, true, err
		}
		raw, _ := json.Marshal(want)
		e.log.Info("correcting the share context of a volume made for another mountpoint", "dataset", ds, "predicted", guess.Value, "mountpoint", actual)
		fix := append(slices.Clone(shareProps), zfs.Prop{Name: propShareContext, Value: string(raw)}, zfs.Prop{Name: propPredictedMount, Value: actual})
		if err := e.zfs.Set(ctx, ds, fix...); err != nil {
			return nil, true, e.zfsErr(err, "correcting the share context of "+ds)
		}
		props[propShareContext] = zfs.Property{Value: string(raw), Source: "local"}
	}
	resp, err := e.createResponse(id, props, req.GetVolumeContentSource(), w)
	return resp, true, err
}

// deleteOneShot removes a volume whose share needs no command of its own in
// one exec: `zfs get origin` (a volume cloned from a volume owns the
// snapshot it came from) and, only if that read succeeded, `zfs destroy -r
// -f`, which zfs refuses while clones depend on the volume's snapshots. ok
// is false when the volume needs the step-by-step path.
//
// The destroy runs only after a successful read (`&&`): a read that failed
// for any other reason than "dataset does not exist" (an I/O error, a
// busy pool, the lab's injected faults) says nothing about the dataset, so
// the call must fail and be retried, never answer "deleted already". With
// `;` the read's missing output was taken for a missing dataset whatever
// the destroy said, and a volume whose destroy zfs refused (dependent
// clones) was reported deleted: the fault soak's leaked soak-1-28-src with
// its snapshot and clone (lab/soak, seed 1).
func (e *Engine) deleteOneShot(ctx context.Context, id, ds string) (bool, error) {
	cli, ok := e.programs()
	if !ok || e.cfg.retain || len(e.share.AssetProps()) > 0 {
		return false, nil
	}
	if _, ok := e.share.(PropertySharer); !ok {
		return false, nil
	}
	out, err := cli.RunProgram(ctx,
		cli.ZFSLine(zfs.GetArgs(ds, "origin")...)+" && "+cli.ZFSLine("destroy", "-r", "-f", ds))
	if errors.Is(err, zfs.ErrProgramTooLong) {
		return false, nil
	}
	if err != nil {
		return true, transportErr(e.cfg.driver, err)
	}
	props, _ := zfs.ParseGet(out.Stdout)
	if len(props) == 0 {
		// The read failed and nothing was destroyed.
		rerr := &zfs.Error{Command: "zfs get", Stderr: strings.TrimSpace(out.Stderr), Code: out.Code}
		if out.Code != 0 && zfs.IsNotExist(rerr) {
			return true, nil // no such dataset: deleted already
		}
		return true, e.zfsErr(rerr, "reading "+ds)
	}
	if msg := zfs.StderrOf(out.Stderr, ds); out.Code != 0 {
		derr := &zfs.Error{Command: "zfs destroy", Stderr: msg, Code: out.Code}
		switch {
		case zfs.IsNotExist(derr):
			return true, nil
		case zfs.HasDependentClones(derr):
			return true, status.Errorf(codes.FailedPrecondition, "volume %s has dependent clones (%s): delete the volumes made from it, or its snapshots' clones, first", id, strings.Join(clonesIn(msg), ", "))
		case zfs.IsBusy(derr):
			// Let go of in a moment: the step-by-step destroy retries.
			if err := e.destroy(ctx, ds); err != nil {
				return true, err
			}
		default:
			return true, e.zfsErr(derr, "destroying "+ds)
		}
	}
	if origin := props["origin"].Value; strings.Contains(origin, "@"+cloneSnapshotPrefix) {
		if err := e.zfs.Destroy(ctx, origin, zfs.DestroyOptions{Defer: true}); err != nil && !zfs.IsNotExist(err) {
			e.log.Warn("could not remove the snapshot the volume was cloned from", "snapshot", origin, "error", err)
		}
	}
	return true, nil
}

// clonesIn reads the datasets zfs lists after "use '-R' to destroy the
// following datasets:".
func clonesIn(msg string) []string {
	var out []string
	listing := false
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "use '-R'"):
			listing = true
		case listing && l != "" && !strings.HasPrefix(l, "cannot "):
			out = append(out, l)
		}
	}
	return out
}

// snapshotOneShot makes a zfs snapshot in one exec: `zfs snapshot` with
// its labels, `zfs get` of it, and the listing that enforces CSI's rule
// that a snapshot name belongs to one source volume. The rule is checked
// after the fact: a snapshot this call made under a name another volume
// holds is destroyed again (a second exec, only then). ok is false when
// the step-by-step path must run.
func (e *Engine) snapshotOneShot(ctx context.Context, name, srcID, id string, ref snapshotRef) (*csi.CreateSnapshotResponse, bool, error) {
	cli, ok := e.programs()
	if !ok || ref.detached {
		return nil, false, nil
	}
	labels := []zfs.Prop{{Name: propSnapshotName, Value: name}, {Name: propSnapshotSource, Value: srcID}, {Name: propManaged, Value: "true"}}
	snapArgs := []string{"snapshot"}
	for _, p := range labels {
		snapArgs = append(snapArgs, "-o", p.Name+"="+p.Value)
	}
	cols := "name," + propSnapshotName + "," + propSnapshotSource
	prog := []string{
		cli.ZFSLine(append(snapArgs, ref.dataset)...),
		cli.ZFSLine(zfs.GetArgs(ref.dataset, snapshotProps...)...),
		cli.ZFSLine("list", "-Hp", "-o", cols, "-t", "snapshot", "-r", e.cfg.parent),
	}
	if e.cfg.snapshot != "" { // detached snapshots hold names too
		prog = append(prog, cli.ZFSLine("list", "-Hp", "-o", cols, "-t", e.cfg.kind.String(), "-r", e.cfg.snapshot))
	}
	out, err := cli.RunProgram(ctx, prog...)
	if errors.Is(err, zfs.ErrProgramTooLong) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, transportErr(e.cfg.driver, err)
	}
	// stdout: the get's rows (4 columns and more), then the listing's (3).
	var getRows strings.Builder
	conflict := ""
	for _, l := range strings.Split(out.Stdout, "\n") {
		f := strings.Split(strings.TrimRight(l, "\r"), "\t")
		switch {
		case len(f) >= 4 && f[0] == ref.dataset:
			getRows.WriteString(l + "\n")
		case len(f) == 3 && f[1] == name && f[2] != srcID:
			conflict = f[2]
		}
	}
	p, _ := zfs.ParseGet(getRows.String())
	if len(p) == 0 {
		// No snapshot: the snapshot command's own message says why.
		srcDS := e.cfg.datasetName(srcID)
		msg := zfs.StderrOf(zfs.StderrOf(zfs.StderrOf(out.Stderr, ref.dataset), e.cfg.parent), e.cfg.snapshot)
		serr := &zfs.Error{Command: "zfs snapshot", Stderr: msg, Code: out.Code}
		if strings.Contains(out.Stderr, "cannot open '"+srcDS+"'") || zfs.IsNotExist(serr) {
			return nil, true, status.Errorf(codes.NotFound, "source volume %s does not exist", srcID)
		}
		return nil, true, e.zfsErr(serr, "snapshotting "+srcDS)
	}
	// "dataset already exists": an earlier call made it (its id holds the
	// source volume and the name, so it is this snapshot).
	made := !strings.Contains(out.Stderr, "cannot create snapshot")
	if conflict != "" {
		if made {
			if err := e.zfs.Destroy(ctx, ref.dataset, zfs.DestroyOptions{}); err != nil && !zfs.IsNotExist(err) {
				e.log.Warn("could not remove a snapshot made under a name in use", "snapshot", ref.dataset, "error", err)
			}
		}
		return nil, true, status.Errorf(codes.AlreadyExists, "snapshot name %q is already used for volume %s", name, conflict)
	}
	return &csi.CreateSnapshotResponse{Snapshot: e.snapshotFromProps(id, srcID, p)}, true, nil
}

// expandOneShot grows a volume in one exec. Whether to grow depends on the
// size on the host (setting volsize or refquota unconditionally could
// shrink a volume), so the program hands the size `zfs get` prints to
// `test` through a pipe and xargs, and sets only when test says it is
// smaller:
//
//	zfs get <sizes> ds; zfs get -Hp -o value volsize ds | xargs test N -gt && zfs set volsize=N ds
//
// Pipes, && and xargs are POSIX (every shell and host we drive has them);
// still no command substitution, variables or conditionals. The first get
// is the answer's read-back: the size before the call. A zvol's size is
// rounded to its volblocksize, which the program cannot know beforehand;
// the configured one (what every zvol this driver makes gets) is assumed
// and checked against the read-back: a zvol with another block size whose
// set zfs refused is grown the step-by-step way. ok is false when the call
// must take that path.
func (e *Engine) expandOneShot(ctx context.Context, id, ds string, r *csi.CapacityRange) (*csi.ControllerExpandVolumeResponse, bool, error) {
	cli, ok := e.programs()
	if !ok {
		return nil, false, nil
	}
	var block int64
	if e.cfg.kind == volume {
		block = e.cfg.zvolBlocksize
	}
	size, err := e.expandSize(r, block)
	if err != nil {
		// Maybe only for the assumed block size: the step-by-step path
		// decides with the real one (and answers this error if it holds).
		return nil, false, nil //nolint:nilerr // the fallback path reports it
	}
	prog := []string{cli.ZFSLine(zfs.GetArgs(ds, expandProps...)...)}
	if set := e.growProps(size); len(set) > 0 {
		setLine := cli.ZFSLine(append([]string{"set"}, append(propArgs(set), ds)...)...)
		if guard := e.sizeProp(); guard != "" {
			setLine = cli.ZFSLine("get", "-Hp", "-o", "value", guard, ds) + " | " +
				zfs.Line("xargs", "test", strconv.FormatInt(size, 10), "-gt") + " && " + setLine
		}
		prog = append(prog, setLine)
	}
	out, err := cli.RunProgram(ctx, prog...)
	if errors.Is(err, zfs.ErrProgramTooLong) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, transportErr(e.cfg.driver, err)
	}
	props, _ := zfs.ParseGet(out.Stdout)
	if len(props) == 0 {
		rerr := &zfs.Error{Command: "zfs get", Stderr: strings.TrimSpace(out.Stderr), Code: out.Code}
		if zfs.IsNotExist(rerr) {
			return nil, true, status.Errorf(codes.NotFound, "volume %s does not exist (no dataset %s)", id, ds)
		}
		return nil, true, e.zfsErr(rerr, "reading "+ds)
	}
	have := e.sizeOf(props)
	if e.sizeProp() != "" && have >= size {
		return e.expanded(have), true, nil // large enough: the guard set nothing
	}
	if out.Code != 0 {
		if e.cfg.kind == volume && props.Int("volblocksize") != block {
			return nil, false, nil // rounded for another block size
		}
		return nil, true, e.growErr(&zfs.Error{Command: "zfs set", Stderr: zfs.StderrOf(out.Stderr, ds), Code: out.Code}, id, ds, size)
	}
	return e.expanded(size), true, nil
}

// sizeProp is the property whose value sizeOf reads, the one a grow must
// compare before it sets: none for filesystems without quotas, whose size
// is unbounded (their refreservation, if any, is set every time, as the
// step-by-step path does).
func (e *Engine) sizeProp() string {
	switch {
	case e.cfg.kind == volume:
		return "volsize"
	case e.cfg.quotas:
		return "refquota"
	}
	return ""
}

// propArgs are the name=value arguments of `zfs set`.
func propArgs(props []zfs.Prop) []string {
	a := make([]string, len(props))
	for i, p := range props {
		a[i] = p.Name + "=" + p.Value
	}
	return a
}
