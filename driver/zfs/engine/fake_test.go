package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// fakePlatform is an in-memory Platform: datasets and zvols (no
// snapshots), a sharer that records what it shares, and fixed limits.
type fakePlatform struct {
	ds       *fakeDatasets
	share    *fakeSharer
	maxZvol  int
	minQuota int64
	perms    []Permissions // SetPermissions calls
	closed   bool
}

func newFakePlatform() *fakePlatform {
	return &fakePlatform{ds: &fakeDatasets{sets: map[string]zfs.Properties{}}, share: &fakeSharer{shared: map[string]bool{}}, maxZvol: 255}
}

func (p *fakePlatform) Datasets() zfs.Datasets { return p.ds }
func (p *fakePlatform) Sharer() Sharer         { return p.share }
func (p *fakePlatform) MaxZvolName(context.Context) (int, string, error) {
	return p.maxZvol, "fake host", nil
}
func (p *fakePlatform) MinQuota() int64 { return p.minQuota }
func (p *fakePlatform) SetPermissions(_ context.Context, _ string, perm Permissions) error {
	p.perms = append(p.perms, perm)
	return nil
}
func (p *fakePlatform) Close() error { p.closed = true; return nil }

// fakeSharer shares by recording the dataset; its volume_context names it.
type fakeSharer struct {
	mu     sync.Mutex
	shared map[string]bool
	fail   error // returned by Create when set
}

func (s *fakeSharer) Create(_ context.Context, r ShareRequest) (map[string]string, []zfs.Prop, error) {
	if s.fail != nil {
		return nil, nil, s.fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared[r.Dataset] = true
	return map[string]string{"node_attach_driver": "nfs", "server": "192.0.2.1", "share": r.Mountpoint},
		[]zfs.Prop{{Name: "fake:share_name", Value: r.ID}}, nil
}

func (s *fakeSharer) Remove(_ context.Context, dataset string, _ zfs.Properties) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.shared, dataset)
	return nil
}

func (s *fakeSharer) AssetProps() []string { return []string{"fake:share_name"} }

// fakeDatasets keeps filesystems and zvols by name; snapshots are not
// supported.
type fakeDatasets struct {
	mu   sync.Mutex
	sets map[string]zfs.Properties
}

var errUnsupported = errors.New("not supported by the fake")

func notExist(name string) error {
	return &zfs.Error{Kind: zfs.KindNotExist, Stderr: "cannot open '" + name + "': dataset does not exist"}
}

func (f *fakeDatasets) Create(_ context.Context, name string, o zfs.CreateOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sets[name]; ok {
		return &zfs.Error{Kind: zfs.KindExists, Stderr: "cannot create '" + name + "': dataset already exists"}
	}
	p := zfs.Properties{"type": {Value: "filesystem"}, "mountpoint": {Value: "/mnt/" + name}, "available": {Value: "1000000000"}}
	if o.Volsize > 0 {
		p = zfs.Properties{"type": {Value: "volume"}, "volsize": {Value: strconv.FormatInt(o.Volsize, 10)}, "volblocksize": {Value: "16384"}}
	}
	for _, pr := range o.Props {
		p[pr.Name] = zfs.Property{Value: pr.Value, Source: "local"}
	}
	f.sets[name] = p
	for parent := name; o.Parents && strings.Contains(parent, "/"); {
		parent = parent[:strings.LastIndexByte(parent, '/')]
		if _, ok := f.sets[parent]; !ok {
			f.sets[parent] = zfs.Properties{"type": {Value: "filesystem"}, "mountpoint": {Value: "/mnt/" + parent}, "available": {Value: "1000000000"}}
		}
	}
	return nil
}

func (f *fakeDatasets) CreateAndGet(ctx context.Context, name string, o zfs.CreateOptions, props ...string) (zfs.Properties, error) {
	if err := f.Create(ctx, name, o); err != nil {
		return nil, err
	}
	return f.Get(ctx, name, props...)
}

func (f *fakeDatasets) Destroy(_ context.Context, name string, _ zfs.DestroyOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sets[name]; !ok {
		return notExist(name)
	}
	delete(f.sets, name)
	return nil
}

func (f *fakeDatasets) Set(_ context.Context, name string, props ...zfs.Prop) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.sets[name]
	if !ok {
		return notExist(name)
	}
	for _, pr := range props {
		p[pr.Name] = zfs.Property{Value: pr.Value, Source: "local"}
	}
	return nil
}

func (f *fakeDatasets) Snapshot(context.Context, string, ...zfs.Prop) error { return errUnsupported }
func (f *fakeDatasets) Clone(context.Context, string, string, ...zfs.Prop) error {
	return errUnsupported
}
func (f *fakeDatasets) SendReceive(context.Context, string, string) error { return errUnsupported }

func (f *fakeDatasets) Get(_ context.Context, name string, props ...string) (zfs.Properties, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.sets[name]
	if !ok {
		return nil, notExist(name)
	}
	out := zfs.Properties{}
	for _, n := range props {
		v, ok := p[n]
		if !ok {
			v = zfs.Property{Value: "-", Source: "-"}
		}
		out[n] = v
	}
	return out, nil
}

// List lists root and its children (any depth > 0 lists one level).
func (f *fakeDatasets) List(_ context.Context, root string, o zfs.ListOptions) ([]zfs.Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sets[root]; !ok {
		return nil, notExist(root)
	}
	var rows []zfs.Row
	for name, p := range f.sets {
		rest, child := strings.CutPrefix(name, root+"/")
		if name != root && (!child || strings.Contains(rest, "/")) {
			continue
		}
		if len(o.Types) > 0 && !slices.Contains(o.Types, p["type"].Value) {
			continue
		}
		r := zfs.Row{Name: name, Props: map[string]string{}}
		for _, n := range o.Props {
			v, ok := p[n]
			if !ok {
				v.Value = "-"
			}
			r.Props[n] = v.Value
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

// newFakeEngine builds an engine over a fake platform from the zfs section
// of a config.
func newFakeEngine(t *testing.T, driver string, block bool, zfsSection string) (*Engine, *fakePlatform) {
	t.Helper()
	tree, err := config.Parse([]byte("zfs:\n" + zfsSection))
	if err != nil {
		t.Fatal(err)
	}
	p := newFakePlatform()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := New(Options{Options: backend.Options{File: "test.yaml", Config: tree, Logger: log}, Driver: driver, Block: block, Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	return e, p
}
