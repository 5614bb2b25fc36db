package metrics

import "sync"

// connSet is the set of connection names that may become label values:
// those the proxy has read a file for. A name arrives here only through
// the proxy's Observer, after a file <name>.yaml was found in the
// configured folder, so the label's values are bounded by that folder
// however many distinct names requests carry.
type connSet struct {
	mu    sync.RWMutex
	known map[string]bool
}

func (s *connSet) add(name string) {
	s.mu.Lock()
	s.known[name] = true
	s.mu.Unlock()
}

func (s *connSet) remove(name string) {
	s.mu.Lock()
	delete(s.known, name)
	s.mu.Unlock()
}

// label is name's label value: itself when known, else UnknownConnection.
func (s *connSet) label(name string) string {
	s.mu.RLock()
	ok := s.known[name]
	s.mu.RUnlock()
	if ok {
		return name
	}
	return UnknownConnection
}
