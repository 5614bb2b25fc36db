package middleware

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
)

// Call is one method call as a service sees it.
type Call struct {
	Ctx     context.Context
	Version Version
	// User is the authenticated user ("root" for API keys of root).
	User string
	// Progress reports a running job's progress (0–100, description); it
	// is a no-op outside jobs.
	Progress func(percent float64, description string)
}

// Handler runs a method. params are the JSON-RPC positional parameters
// (REST bodies are turned into them by the REST transport). The result is
// marshalled with encoding/json.
type Handler func(c *Call, params []json.RawMessage) (any, error)

// Method is one middleware method, e.g. "pool.dataset.create".
type Method struct {
	Name string
	// Job: the method runs as a job. Callers get the job id back (REST,
	// JSON-RPC with legacy jobs) and wait with core.job_wait/core.get_jobs;
	// the handler's result becomes the job's result.
	Job bool
	// Params names the positional parameters in order. The REST transport
	// needs them: a POST/PUT/DELETE body of a method taking more than one
	// parameter (besides an id from the URL) is an object keyed by these
	// names, as middlewared's restful.py maps it.
	Params  []string
	Handler Handler
	// Validate, when set, checks the arguments before a job is created:
	// the middleware validates a job method's arguments against its API
	// model first and answers a bad call with a validation error, not a
	// job id. Handler still runs every check when Validate passes.
	Validate func(params []json.RawMessage) error
}

// Registry is the set of methods a simulated version has. Services add
// only the methods that exist in the version they are registered for.
type Registry struct {
	mu       sync.RWMutex
	methods  map[string]*Method
	onDelete []func(c *Call, dataset string) error
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{methods: map[string]*Method{}} }

// Add adds (or replaces) a method.
func (r *Registry) Add(m Method) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.methods[m.Name] = &m
}

// Lookup finds a method by its full name.
func (r *Registry) Lookup(name string) (*Method, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m, ok := r.methods[name]
	return m, ok
}

// Names lists the methods, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.methods))
	for n := range r.methods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HasNamespace reports whether any method lives in namespace ns (e.g.
// "sharing.nfs"): the REST transport routes /sharing/nfs only then.
func (r *Registry) HasNamespace(ns string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for n := range r.methods {
		if len(n) > len(ns) && n[:len(ns)] == ns && n[len(ns)] == '.' {
			return true
		}
	}
	return false
}
