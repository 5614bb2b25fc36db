package storage

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func (s *service) registerReplication() {
	s.r.Add(middleware.Method{Name: "replication.run_onetime", Job: true, Params: []string{"replication_run_onetime"}, Handler: s.runOnetime})
}

// runOnetime is the replication.run_onetime job: a replication task run
// once without being saved. The LOCAL transport copies the matching
// snapshots of each source dataset to the target with the model's send
// and receive, as zettarepl does; SSH (and SSH+NETCAT, whose data also
// goes over SSH here) is replication_ssh.go.
func (s *service) runOnetime(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	a, err := s.replicationSchema().parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	if errs := validateReplication(a, s.keys.get); len(errs) > 0 {
		return nil, errs
	}
	if a.str("transport") != "LOCAL" {
		return s.runOnetimeSSH(c, a)
	}
	match := snapshotMatcher(a)
	return nil, s.eachSource(c, a, "Replicating", func(ds, dst string, top bool) error {
		return s.replicateDataset(a, ds, dst, match, top)
	})
}

// eachSource walks the task's source datasets (with their children when
// recursive, less the excluded ones) in order, calling fn with each one's
// target name, and reports the job's progress per source: the LOCAL and
// the SSH transports share this walk.
func (s *service) eachSource(c *middleware.Call, a args, start string, fn func(ds, dst string, top bool) error) error {
	target := a.str("target_dataset")
	sources, _ := a["source_datasets"].([]any)
	progress(c, 0, start)
	for i, x := range sources {
		src, _ := x.(string)
		if !s.m.Exists(src) || strings.Contains(src, "@") {
			return middleware.Errorf(middleware.ENOENT, "Dataset %s does not exist", src)
		}
		datasets := []string{src}
		if a.boolean("recursive") {
			datasets, _ = s.m.List(src, true, zfsmodel.Filesystem|zfsmodel.Volume)
		}
		for _, ds := range datasets {
			if excluded(a, ds) {
				continue
			}
			if err := fn(ds, target+strings.TrimPrefix(ds, src), ds == src); err != nil {
				return err
			}
		}
		progress(c, float64(i+1)*100/float64(len(sources)), "Replicated "+src)
	}
	return nil
}

func excluded(a args, ds string) bool {
	l, _ := a["exclude"].([]any)
	for _, x := range l {
		if e, _ := x.(string); ds == e || strings.HasPrefix(ds, e+"/") {
			return true
		}
	}
	return false
}

// shortNames are the snapshot names (after @) of full names.
func shortNames(full []string) []string {
	out := make([]string, len(full))
	for i, f := range full {
		_, out[i], _ = strings.Cut(f, "@")
	}
	return out
}

// replicateDataset brings dst up to date with the matching snapshots of
// src: a full stream when dst is new, else an incremental one from the
// newest snapshot both have.
func (s *service) replicateDataset(a args, src, dst string, match func(string) bool, top bool) error {
	in, snaps, err := s.matchingSnapshots(src, match, top)
	if err != nil || len(snaps) == 0 {
		return err
	}
	sopts := zfsmodel.SendOptions{Props: a.boolean("properties")}
	ropts := zfsmodel.ReceiveOptions{Props: map[string]string{}, NoMount: !a.boolean("mount")}
	for k, v := range a.sub("properties_override") {
		ropts.Props[k] = jsonScalar(v)
	}
	excl, _ := a["properties_exclude"].([]any)
	for _, x := range excl {
		if p, ok := x.(string); ok {
			ropts.Exclude = append(ropts.Exclude, p)
		}
	}
	if sopts.Props && a.boolean("exclude_mountpoint_property") {
		ropts.Exclude = append(ropts.Exclude, "mountpoint")
	}
	last := src + "@" + snaps[len(snaps)-1]
	dstIn, err := s.m.Get(dst)
	exists := err == nil
	if exists && a.boolean("only_from_scratch") {
		return middleware.Errorf(middleware.EFAULT, "Target dataset %s already exists", pyRepr(dst))
	}
	if exists && a.str("readonly") == "REQUIRE" && propRaw(dstIn, "readonly") != "on" {
		return middleware.Errorf(middleware.EFAULT, "Target dataset %s exists and does not have readonly=on property, but replication "+
			"task is set up to require this property. Refusing to replicate.", pyRepr(dst))
	}
	if exists {
		have := map[string]bool{}
		for _, n := range shortNames(dstIn.Snapshots) {
			have[n] = true
		}
		base := -1
		for i, n := range snaps {
			if have[n] {
				base = i
			}
		}
		switch {
		case base == len(snaps)-1:
			// up to date
		case base >= 0:
			sopts.From, sopts.Intermediates = "@"+snaps[base], true
			if err := s.transfer(last, sopts, dst, ropts); err != nil {
				return err
			}
		case a.boolean("allow_from_scratch"):
			if err := s.m.Destroy(dst, zfsmodel.DestroyOptions{Recursive: true}); err != nil {
				return callErrFull("", err)
			}
			exists = false
		default:
			return middleware.Errorf(middleware.EFAULT, "No incremental base on dataset %s and replication from scratch is not allowed", pyRepr(src))
		}
	}
	if !exists {
		if parent := dst[:max(strings.LastIndex(dst, "/"), 0)]; parent != "" && !s.m.Exists(parent) {
			if err := s.m.Create(parent, zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{Parents: true}); err != nil {
				return callErrFull("", err)
			}
		}
		first := src + "@" + snaps[0]
		if err := s.transfer(first, sopts, dst, ropts); err != nil {
			return err
		}
		if len(snaps) > 1 {
			sopts.From, sopts.Intermediates = "@"+snaps[0], true
			if err := s.transfer(last, sopts, dst, ropts); err != nil {
				return err
			}
		}
	}
	if a.str("readonly") == "SET" {
		if err := s.m.SetProperty(dst, "readonly", "on"); err != nil {
			return callErrFull("", err)
		}
	}
	if a.str("retention_policy") == "SOURCE" {
		if err := s.pruneTarget(in, dst, match); err != nil {
			return err
		}
	}
	s.log.Debug("replicated", "source", src, "target", dst, "snapshots", len(snaps))
	return nil
}

// pruneTarget is retention "same as source": matching target snapshots
// the source no longer has are destroyed.
func (s *service) pruneTarget(src *zfsmodel.Info, dst string, match func(string) bool) error {
	dstIn, err := s.m.Get(dst)
	if err != nil {
		return nil //nolint:nilerr // no target dataset: nothing to prune
	}
	have := map[string]bool{}
	for _, n := range shortNames(src.Snapshots) {
		have[n] = true
	}
	for _, n := range shortNames(dstIn.Snapshots) {
		if match(n) && !have[n] {
			if err := s.m.Destroy(dst+"@"+n, zfsmodel.DestroyOptions{}); err != nil {
				return callErrFull("", err)
			}
		}
	}
	return nil
}

// transfer pipes zfs send of snap into zfs receive of dst.
func (s *service) transfer(snap string, sopts zfsmodel.SendOptions, dst string, ropts zfsmodel.ReceiveOptions) error {
	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() {
		err := s.m.Send(pw, snap, sopts, nil)
		pw.CloseWithError(err)
		sent <- err
	}()
	rerr := s.m.Receive(pr, dst, ropts)
	if rerr == nil {
		_, _ = io.Copy(io.Discard, pr) // let the sender finish
	}
	pr.CloseWithError(fmt.Errorf("receive ended"))
	serr := <-sent
	// when both ends fail, the one the model reports is the cause; the
	// other only saw the pipe close
	switch {
	case serr != nil && (rerr == nil || zfsmodel.KindOf(serr) != 0):
		return callErrFull("", serr)
	case rerr != nil:
		return callErrFull("", rerr)
	}
	return nil
}

// matchingSnapshots is src and its snapshots (short names) that the task's
// naming schema matches. None is an error only for the task's own
// dataset: the middleware skips children without a matching snapshot.
func (s *service) matchingSnapshots(src string, match func(string) bool, top bool) (*zfsmodel.Info, []string, error) {
	in, err := s.m.Get(src)
	if err != nil {
		return nil, nil, callErrFull("", err)
	}
	var snaps []string
	for _, n := range shortNames(in.Snapshots) {
		if match(n) {
			snaps = append(snaps, n)
		}
	}
	if len(snaps) == 0 && top {
		return nil, nil, middleware.Errorf(middleware.EFAULT, "Dataset %s does not have any snapshots matching the replication task", pyRepr(src))
	}
	return in, snaps, nil
}
