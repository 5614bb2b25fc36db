package metrics

import (
	"sync"
	"time"

	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// ConnectionState is the proxy.Observer that keeps the connection_* metrics.
// It also admits each connection name to the label set.
type ConnectionState struct {
	m   *Metrics
	now func() time.Time

	mu      sync.Mutex
	errFile map[string]string // connection -> file of its config_error series
}

var _ proxy.Observer = (*ConnectionState)(nil)

// ConnectionState returns the observer to give proxy.Connections.SetObserver.
func (m *Metrics) ConnectionState() *ConnectionState {
	return &ConnectionState{m: m, now: time.Now, errFile: map[string]string{}}
}

// ConnectionLoaded records a new version of name's file.
func (s *ConnectionState) ConnectionLoaded(name, file string, err error) {
	s.m.conns.add(name)
	s.m.reloads.WithLabelValues(name).Inc()
	s.m.lastReload.WithLabelValues(name).Set(float64(s.now().UnixNano()) / 1e9)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearError(name)
	if err != nil {
		s.m.loaded.WithLabelValues(name).Set(0)
		s.m.configError.WithLabelValues(name, file).Set(1)
		s.errFile[name] = file
		return
	}
	s.m.loaded.WithLabelValues(name).Set(1)
}

// ConnectionRemoved drops name's state series; its call counters stay (a
// counter that vanished would read as a reset).
func (s *ConnectionState) ConnectionRemoved(name string) {
	s.m.conns.remove(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearError(name)
	s.m.loaded.DeleteLabelValues(name)
}

// clearError removes name's config_error series; s.mu is held.
func (s *ConnectionState) clearError(name string) {
	if f, ok := s.errFile[name]; ok {
		s.m.configError.DeleteLabelValues(name, f)
		delete(s.errFile, name)
	}
}
