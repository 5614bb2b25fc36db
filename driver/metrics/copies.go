package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// Cross-connection copies (clone and restore across connections): bytes
// streamed into each target connection and copies finished by result. The
// counters are registered on first use, so a deployment that never copies
// exports none.

type copyMetrics struct {
	bytes  *prometheus.CounterVec
	copies *prometheus.CounterVec
}

var copyRegs = struct {
	sync.Mutex
	by map[*Metrics]*copyMetrics
}{by: map[*Metrics]*copyMetrics{}}

func (m *Metrics) copyMetrics() *copyMetrics {
	copyRegs.Lock()
	defer copyRegs.Unlock()
	if c := copyRegs.by[m]; c != nil {
		return c
	}
	c := &copyMetrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "copy_bytes_total",
			Help: "Bytes streamed into a connection by clones and restores across connections."}, []string{"connection"}),
		copies: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "copies_total",
			Help: "Clones and restores across connections finished, by target connection and result (ok or the gRPC code)."}, []string{"connection", "result"}),
	}
	m.reg.MustRegister(c.bytes, c.copies)
	copyRegs.by[m] = c
	return c
}

var _ proxy.CopyObserver = (*ConnectionState)(nil)

// CopyProgress counts bytes copied into target.
func (s *ConnectionState) CopyProgress(target string, delta int64) {
	s.m.copyMetrics().bytes.WithLabelValues(s.m.conns.label(target)).Add(float64(delta))
}

// CopyFinished counts a finished copy.
func (s *ConnectionState) CopyFinished(target string, err error) {
	result := "ok"
	if err != nil {
		result = status.Code(err).String()
	}
	s.m.copyMetrics().copies.WithLabelValues(s.m.conns.label(target), result).Inc()
}
