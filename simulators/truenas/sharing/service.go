package sharing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Options configure Register.
type Options struct {
	// StateDir holds one JSON file per namespace; required. Objects
	// survive a new Register on the same directory.
	StateDir string
	// Hostname is the appliance's name, added to log records.
	Hostname string
	// Logger receives one record per change (never a secret); nil: discard.
	Logger *slog.Logger
	// Kernel, when set, makes the shares and targets real after every
	// change and at Register (package kernel); Close removes them. Only
	// where the kernel has the target modules (the lab's storage VM).
	Kernel *kernel.Reconciler
	// KernelOwner names the service's objects in Kernel (default
	// "truenas-<Hostname>").
	KernelOwner string
}

// Namespaces, also the names of their state files (<namespace>.json).
const (
	nsNFS         = "sharing.nfs"
	nsSMB         = "sharing.smb"
	nsISCSIGlobal = "iscsi.global"
	nsPortal      = "iscsi.portal"
	nsInitiator   = "iscsi.initiator"
	nsAuth        = "iscsi.auth"
	nsTarget      = "iscsi.target"
	nsExtent      = "iscsi.extent"
	nsTargetExt   = "iscsi.targetextent"
	nsNVMetGlobal = "nvmet.global"
	nsSubsys      = "nvmet.subsys"
	nsNamespace   = "nvmet.namespace"
	nsPort        = "nvmet.port"
	nsPortSubsys  = "nvmet.port_subsys"
	nsHost        = "nvmet.host"
	nsHostSubsys  = "nvmet.host_subsys"
)

// Service is the sharing half of the simulated middleware: NFS and SMB
// shares, iSCSI and (25.10+) NVMe-oF targets, kept in memory and on disk.
type Service struct {
	mu    sync.Mutex
	model *zfsmodel.Model
	v     middleware.Version
	dir   string
	log   *slog.Logger
	t     map[string]*table
	order []string        // t's names, in Register's order: persist's walk
	inUse map[string]bool // iSCSI target names with simulated initiator sessions

	kernel      *kernel.Reconciler
	kernelOwner string
}

// Register loads (or creates) the state under o.StateDir and adds the
// sharing methods that exist in version v to r, plus the hook that
// removes shares and targets when their dataset is deleted.
func Register(r *middleware.Registry, m *zfsmodel.Model, v middleware.Version, o Options) (*Service, error) {
	if r == nil || m == nil {
		return nil, errors.New("sharing: Register needs a registry and a ZFS model")
	}
	if o.StateDir == "" {
		return nil, errors.New("sharing: Options.StateDir is required")
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("sharing: state directory: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Hostname != "" {
		log = log.With("host", o.Hostname)
	}
	s := &Service{model: m, v: v, dir: o.StateDir, log: log.With("service", "sharing"), t: map[string]*table{}, inUse: map[string]bool{}}
	names := []string{nsNFS, nsSMB, nsISCSIGlobal, nsPortal, nsInitiator, nsAuth, nsTarget, nsExtent, nsTargetExt, nsSnapTask}
	if s.nvmet() {
		names = append(names, nsNVMetGlobal, nsSubsys, nsNamespace, nsPort, nsPortSubsys, nsHost, nsHostSubsys)
	}
	s.order = names
	for _, ns := range names {
		t := &table{file: ns + ".json", pathKey: pathKeys[ns]}
		_, statErr := os.Stat(filepath.Join(o.StateDir, t.file))
		if err := t.load(o.StateDir); err != nil {
			return nil, fmt.Errorf("sharing: %w", err)
		}
		s.t[ns] = t
		if errors.Is(statErr, os.ErrNotExist) {
			// a fresh system: seed what the real one ships with
			if err := s.seed(ns); err != nil {
				return nil, err
			}
		}
	}
	s.registerNFS(r)
	s.registerSMB(r)
	s.registerISCSI(r)
	s.registerSnapshotTask(r)
	if s.nvmet() {
		s.registerNVMet(r)
	}
	r.OnDatasetDelete(s.datasetDeleted)
	if o.Kernel != nil {
		s.kernel, s.kernelOwner = o.Kernel, o.KernelOwner
		if s.kernelOwner == "" {
			s.kernelOwner = "truenas-" + o.Hostname
			if o.Hostname == "" {
				s.kernelOwner = "truenas"
			}
		}
		s.resyncAfter(r, "pool.dataset.update")
		s.mu.Lock()
		err := s.applyKernel()
		s.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("sharing: serving the saved shares and targets: %w", err)
		}
	}
	return s, nil
}

// nvmet reports whether NVMe-oF (nvmet.*) exists in the simulated version.
func (s *Service) nvmet() bool { return s.v.AtLeast(25, 10, 0) }

// seed fills a new namespace with the objects a fresh system has: only
// the config singletons. A fresh TrueNAS has no iSCSI portal and no
// initiator group (the admin creates them in the UI's wizard), so neither
// does a fresh simulator.
func (s *Service) seed(ns string) error {
	t := s.t[ns]
	switch ns {
	case nsISCSIGlobal:
		t.put(s.iscsiGlobalDefaults())
	case nsNVMetGlobal:
		t.put(nvmetGlobalDefaults())
	default:
		return nil
	}
	if err := t.save(s.dir); err != nil {
		return fmt.Errorf("sharing: %w", err)
	}
	return nil
}

// commit records the named tables' new versions, which the method
// writes once it has released s.mu (persisting, persist.go), then (with a
// Kernel) serves the new configuration. Callers hold s.mu.
func (s *Service) commit(names ...string) error {
	for _, ns := range names {
		s.t[ns].snap()
	}
	return s.applyKernel()
}

// crud describes a CRUD namespace: query and get_instance are generic,
// create/update/delete are the namespace's own.
type crud struct {
	ns      string
	verbose string // the service's verbose_name, for "<verbose> <id> does not exist"
	// view turns a stored row into what query returns (nil: as stored).
	view func(r middleware.Row, opts middleware.QueryOptions) middleware.Row
	// hidden keys are in rows only so filters on them work (the real
	// query filters in SQL on columns the entry does not show).
	hidden []string

	create, update, del                   middleware.Handler
	createParams, updateParams, delParams []string
}

func (s *Service) addCRUD(r *middleware.Registry, c crud) {
	r.Add(middleware.Method{Name: c.ns + ".query", Params: []string{"filters", "options"}, Handler: func(call *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 2); err != nil {
			return nil, err
		}
		filters, opts, err := middleware.ParseQuery(params, strings.ReplaceAll(c.ns, ".", "_")+"_query")
		if err != nil {
			return nil, err
		}
		res, err := middleware.Query(s.rows(c, opts, filters), filters, opts)
		if err != nil {
			return nil, err
		}
		return strip(res, c.hidden, opts.Select), nil
	}})
	r.Add(middleware.Method{Name: c.ns + ".get_instance", Params: []string{"id", "options"}, Handler: func(call *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 2); err != nil {
			return nil, err
		}
		id, err := intArg(s.dialectFor(c.ns, ""), params, 0, "id")
		if err != nil {
			return nil, err
		}
		var opts middleware.QueryOptions
		if given(params, 1) {
			if _, o, err := middleware.ParseQuery([]json.RawMessage{json.RawMessage("[]"), params[1]}, strings.ReplaceAll(c.ns, ".", "_")+"_get_instance"); err == nil {
				opts = o
			}
		}
		if row := s.row(c, opts, id); row != nil {
			return strip(row, c.hidden, nil), nil
		}
		return nil, middleware.NotFound(c.verbose, id)
	}})
	r.Add(middleware.Method{Name: c.ns + ".create", Params: c.createParams, Handler: s.persisting(c.create)})
	r.Add(middleware.Method{Name: c.ns + ".update", Params: c.updateParams, Handler: s.persisting(c.update)})
	r.Add(middleware.Method{Name: c.ns + ".delete", Params: c.delParams, Handler: s.persisting(c.del)})
}

// rows returns copies of a namespace's rows as query shows them: all of
// them, or, when filters hold a term ["id", "=", n] at the top (where
// every term must hold), only the row with that id. Query applies the
// filters to what rows returns, so that row is the whole answer; copying
// every row was a third of the simulator's CPU per REST get by id (GET
// /sharing/nfs/id/<n> is such a query) at 1,500 shares (issue 16, sixth
// round). Views never change a row's id.
func (s *Service) rows(c crud, opts middleware.QueryOptions, filters []any) []middleware.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t[c.ns]
	all := t.rows
	if id, ok := idTerm(filters); ok {
		all = nil
		if r := t.get(id); r != nil {
			all = []middleware.Row{r}
		}
	}
	out := make([]middleware.Row, 0, len(all))
	for _, r := range all {
		r = clone(r)
		if c.view != nil {
			r = c.view(r, opts)
		}
		out = append(out, r)
	}
	return out
}

// idTerm finds a top-level ["id", "=", n] filter with n an integer (a
// JSON number: float64 as ParseQuery decodes it). Any row that matches it
// has that id, and the table holds at most one row per id.
func idTerm(filters []any) (int, bool) {
	for _, f := range filters {
		l, ok := f.([]any)
		if !ok || len(l) != 3 || l[0] != "id" || l[1] != "=" {
			continue
		}
		if n, ok := l[2].(float64); ok && n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), true
		}
	}
	return 0, false
}

// row returns a copy of the row with id as query shows it, or nil: the
// one row get_instance answers, without copying the table.
func (s *Service) row(c crud, opts middleware.QueryOptions, id int) middleware.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.t[c.ns].get(id)
	if r == nil {
		return nil
	}
	r = clone(r)
	if c.view != nil {
		r = c.view(r, opts)
	}
	return r
}

// strip drops hidden keys from a query result unless they were selected.
func strip(res any, hidden, selected []string) any {
	if len(hidden) == 0 {
		return res
	}
	del := func(r middleware.Row) {
		for _, k := range hidden {
			if !slices.Contains(selected, k) {
				delete(r, k)
			}
		}
	}
	switch x := res.(type) {
	case middleware.Row:
		del(x)
	case []middleware.Row:
		for _, r := range x {
			del(r)
		}
	}
	return res
}

// instance returns the stored row with id, or the "does not exist" error
// that update and delete raise. Callers hold s.mu.
func (s *Service) instance(ns, verbose string, id int) (middleware.Row, error) {
	r := s.t[ns].get(id)
	if r == nil {
		return nil, middleware.NotFound(verbose, id)
	}
	return clone(r), nil
}

// dialectFor is the argument dialect a namespace uses in the simulated
// version: pydantic once the namespace was ported to the new API models
// (sharing.nfs and iscsi.* in 25.04, sharing.smb in 25.10), the old
// schema before. attr is the argument (pydantic) or schema (old) name.
func (s *Service) dialectFor(ns, attr string) dialect {
	ported := s.v.AtLeast(25, 4, 0)
	if ns == nsSMB {
		ported = s.v.AtLeast(25, 10, 0)
	}
	if ported {
		return pydantic(attr)
	}
	return oldSchema(attr)
}

// insert stores a new row with the next id and returns it. Callers hold s.mu.
func (s *Service) insert(ns string, data middleware.Row) (middleware.Row, error) {
	t := s.t[ns]
	data["id"] = t.nextID()
	row := normalize(data)
	t.put(row)
	if err := s.commit(ns); err != nil {
		return nil, err
	}
	s.log.Info("created", "namespace", ns, "id", row["id"])
	return clone(row), nil
}

// replace stores a changed row and returns it. Callers hold s.mu.
func (s *Service) replace(ns string, row middleware.Row) (middleware.Row, error) {
	row = normalize(row)
	s.t[ns].put(row)
	if err := s.commit(ns); err != nil {
		return nil, err
	}
	s.log.Info("updated", "namespace", ns, "id", row["id"])
	return clone(row), nil
}
