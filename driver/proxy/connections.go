package proxy

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

// fileStamp identifies one version of a file. Kubernetes updates Secret
// volumes by swapping a symlink, so the identity (device, inode) changes
// even when size and mtime happen to match.
type fileStamp struct {
	dev, ino uint64
	mtime    int64
	size     int64
}

func stampOf(fi os.FileInfo) fileStamp {
	s := fileStamp{mtime: fi.ModTime().UnixNano(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(st.Dev), st.Ino //nolint:unconvert // Stat_t.Dev is uint32 on some platforms
	}
	return s
}

// instance is one built real driver for one version of a connection file,
// or the error building it gave (so a broken file is not re-parsed on
// every call).
type instance struct {
	cfg   *connConfig
	drv   backend.Driver
	err   error
	stamp fileStamp

	mu       sync.Mutex
	inflight int
	lastUsed time.Time
	retired  bool
	closed   bool
}

func (in *instance) acquire(now time.Time) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.retired {
		return false
	}
	in.inflight++
	in.lastUsed = now
	return true
}

// release ends one call; the last call on a retired instance closes it.
func (in *instance) release(log *slog.Logger, now time.Time) {
	in.mu.Lock()
	in.inflight--
	in.lastUsed = now
	closeNow := in.retired && in.inflight == 0 && !in.closed
	if closeNow {
		in.closed = true
	}
	in.mu.Unlock()
	if closeNow {
		in.close(log)
	}
}

// retire stops new calls; the driver closes once in-flight calls finish.
func (in *instance) retire(log *slog.Logger) {
	in.mu.Lock()
	in.retired = true
	closeNow := in.inflight == 0 && !in.closed
	if closeNow {
		in.closed = true
	}
	in.mu.Unlock()
	if closeNow {
		in.close(log)
	}
}

func (in *instance) close(log *slog.Logger) {
	if in.drv == nil {
		return
	}
	if err := in.drv.Close(); err != nil {
		log.Warn("closing connection driver", "connection", in.cfg.name, "error", err)
	}
}

func (in *instance) idleSince(t time.Time) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.inflight == 0 && in.lastUsed.Before(t)
}

// slot holds the current instance of one connection.
type slot struct {
	// build admits one (re)build at a time per connection. It is a channel,
	// not a mutex, so a call waiting behind a slow build gives up when its
	// own context ends instead of piling up behind it.
	build chan struct{}
	mu    sync.Mutex
	cur   *instance
}

func (s *slot) get() *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

func (s *slot) swap(in *instance) *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur
	s.cur = in
	return old
}

// Connections is the cache of real drivers, one per connection file,
// rebuilt when the file changes and closed when idle.
type Connections struct {
	settings *Settings
	main     config.Tree
	opts     backend.Options // NodeName, CSIName, Logger for every driver
	log      *slog.Logger
	now      func() time.Time

	mu       sync.Mutex
	slots    map[string]*slot
	observer Observer             // see SetObserver
	seen     map[string]fileStamp // the file version last reported to observer

	stop chan struct{}
	done chan struct{}
}

// NewConnections starts the cache; Close stops it.
func NewConnections(s *Settings, main config.Tree, opts backend.Options) *Connections {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Connections{settings: s, main: main, opts: opts, log: log, now: time.Now,
		slots: map[string]*slot{}, seen: map[string]fileStamp{}, stop: make(chan struct{}), done: make(chan struct{})}
	go c.janitor(c.settings.CacheTimeout) // read here: the goroutine never reads settings
	return c
}

// Lease is a driver in use by one call; Release must be called once.
type Lease struct {
	Name     string
	Driver   backend.Driver
	Type     *backend.Type
	Topology []TopologyEntry
	Labels   map[string]string
	in       *instance
	c        *Connections
}

// Release ends the call.
func (l *Lease) Release() {
	l.in.release(l.c.log, l.c.now())
	if l.c.settings.NoCache {
		l.in.retire(l.c.log)
	}
}

// Acquire returns the driver of connection name, building or rebuilding it
// when its file is new or changed. forCreate selects the error code for a
// connection without a file: CreateVolume's parameter is the user's input
// (INVALID_ARGUMENT); for an existing handle the file is what is missing
// (FAILED_PRECONDITION, never OK: the volume may still exist).
func (c *Connections) Acquire(ctx context.Context, name string, forCreate bool) (*Lease, error) {
	if err := CheckConnectionName(name); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	file := connFile(c.settings.ConfigFolder, name)
	for {
		fi, err := os.Stat(file)
		if err != nil {
			c.forget(name)
			if errors.Is(err, fs.ErrNotExist) {
				c.removed(name)
				code := codes.FailedPrecondition
				if forCreate {
					code = codes.InvalidArgument
				}
				return nil, status.Errorf(code, "connection %s: no file %s.yaml in %s", name, name, c.settings.ConfigFolder)
			}
			return nil, status.Errorf(codes.FailedPrecondition, "connection %s: %v", name, err)
		}
		if fi.IsDir() {
			return nil, status.Errorf(codes.FailedPrecondition, "connection %s: %s is a directory, not a config file", name, file)
		}
		stamp := stampOf(fi)
		var in *instance
		if c.settings.NoCache {
			// Every call gets a driver of its own, closed by Release.
			in = c.build(name, file, stamp)
			c.loaded(name, file, in)
		} else {
			sl := c.slot(name)
			if in = sl.get(); in == nil || in.stamp != stamp {
				if in, err = c.rebuild(ctx, sl, name, file, stamp); err != nil {
					return nil, err
				}
			}
		}
		if in.err != nil {
			return nil, in.err
		}
		if !in.acquire(c.now()) {
			continue // retired between get and acquire: look again
		}
		return &Lease{Name: name, Driver: in.drv, Type: in.cfg.typ, Topology: in.cfg.topology, Labels: in.cfg.labels, in: in, c: c}, nil
	}
}

func (c *Connections) slot(name string) *slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	sl := c.slots[name]
	if sl == nil {
		sl = &slot{build: make(chan struct{}, 1)}
		c.slots[name] = sl
	}
	return sl
}

// rebuild replaces the slot's instance unless another caller already built
// this version of the file.
func (c *Connections) rebuild(ctx context.Context, sl *slot, name, file string, stamp fileStamp) (*instance, error) {
	select {
	case sl.build <- struct{}{}:
	case <-ctx.Done():
		return nil, status.Errorf(codes.Aborted, "connection %s: its driver is still being built for another call (%v); try again", name, ctx.Err())
	}
	defer func() { <-sl.build }()
	if in := sl.get(); in != nil && in.stamp == stamp {
		return in, nil
	}
	in := c.build(name, file, stamp)
	c.loaded(name, file, in)
	if old := sl.swap(in); old != nil {
		c.log.Info("connection file changed; replacing its driver", "connection", name, "file", file)
		old.retire(c.log)
	}
	if in.err != nil {
		c.log.Warn("connection unusable", "connection", name, "error", status.Convert(in.err).Message())
	}
	return in, nil
}

func (c *Connections) build(name, file string, stamp fileStamp) *instance {
	in := &instance{stamp: stamp, lastUsed: c.now()}
	cfg, err := readConnection(name, file, c.main, c.settings)
	if err != nil {
		in.err = err
		return in
	}
	in.cfg = cfg
	opts := c.opts
	opts.Connection, opts.File, opts.Config = name, file, cfg.merged
	opts.Logger = c.log.With("connection", name)
	drv, err := cfg.typ.New(opts)
	if err != nil {
		if _, isStatus := status.FromError(err); isStatus {
			in.err = err
		} else {
			in.err = status.Errorf(codes.FailedPrecondition, "connection %s (%s): %v", name, file, err)
		}
		return in
	}
	in.drv = drv
	return in
}

// forget drops a connection whose file is gone.
func (c *Connections) forget(name string) {
	c.mu.Lock()
	sl := c.slots[name]
	c.mu.Unlock()
	if sl == nil {
		return
	}
	if old := sl.swap(nil); old != nil {
		c.log.Info("connection file removed; closing its driver", "connection", name)
		old.retire(c.log)
	}
}

// Names lists the connections that have a file, sorted. Files whose name
// is not a valid connection name (Kubernetes' "..data" entries among them)
// are skipped.
func (c *Connections) Names() ([]string, error) {
	entries, err := os.ReadDir(c.settings.ConfigFolder)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok || e.IsDir() || CheckConnectionName(name) != nil {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// janitor closes drivers idle for longer than timeout (the cache timeout
// when the connections were made).
func (c *Connections) janitor(timeout time.Duration) {
	defer close(c.done)
	if timeout <= 0 {
		<-c.stop
		return
	}
	tick := time.NewTicker(min(timeout/4, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.closeIdle()
		}
	}
}

// closeIdle retires every instance unused since the cache timeout.
func (c *Connections) closeIdle() {
	cutoff := c.now().Add(-c.settings.CacheTimeout)
	c.mu.Lock()
	slots := make(map[string]*slot, len(c.slots))
	for k, v := range c.slots {
		slots[k] = v
	}
	c.mu.Unlock()
	for name, sl := range slots {
		sl.mu.Lock()
		in := sl.cur
		if in != nil && in.idleSince(cutoff) {
			sl.cur = nil
		} else {
			in = nil
		}
		sl.mu.Unlock()
		if in != nil {
			c.log.Debug("closing idle connection driver", "connection", name)
			in.retire(c.log)
		}
	}
}

// Open reports how many connections have a live driver (for tests and metrics).
func (c *Connections) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, sl := range c.slots {
		if in := sl.get(); in != nil && in.drv != nil {
			n++
		}
	}
	return n
}

// Close retires every driver; in-flight calls finish first.
func (c *Connections) Close() {
	close(c.stop)
	<-c.done
	c.mu.Lock()
	slots := c.slots
	c.slots = map[string]*slot{}
	c.mu.Unlock()
	for _, sl := range slots {
		if in := sl.swap(nil); in != nil {
			in.retire(c.log)
		}
	}
}
