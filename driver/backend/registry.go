package backend

import (
	"fmt"
	"slices"
	"sync"
)

var (
	mu    sync.RWMutex
	types = map[string]*Type{}
)

// Register adds a driver type; backends call it from init. Registering a
// name twice is a programming error and panics at start-up.
func Register(t Type) {
	mu.Lock()
	defer mu.Unlock()
	for _, n := range append([]string{t.Name}, t.Aliases...) {
		if _, dup := types[n]; dup {
			panic(fmt.Sprintf("backend: driver type %q registered twice", n))
		}
		tt := t
		types[n] = &tt
	}
}

// Lookup returns the driver type registered under name (or an alias).
func Lookup(name string) (*Type, bool) {
	mu.RLock()
	defer mu.RUnlock()
	t, ok := types[name]
	return t, ok
}

// Names lists every registered driver name, aliases included, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(types))
	for n := range types {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
