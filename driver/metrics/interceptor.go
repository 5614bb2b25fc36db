package metrics

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

type callKey struct{ conn, method string }

// callChildren are the series of one connection and method, resolved once:
// WithLabelValues hashes its labels on every call, a map hit does not.
type callChildren struct {
	calls   prometheus.Counter
	latency prometheus.Observer
	errors  [numCodes]prometheus.Counter // resolved on first use per code
}

// numCodes covers every gRPC code (OK..Unauthenticated = 0..16).
const numCodes = 17

type tripChildren [len(roundtrip.Kinds)]prometheus.Counter

// Interceptor records every call; route names its connection (nil: every
// call is NoConnection, as for a single-backend driver). It must be the
// outermost interceptor so it sees the final gRPC code, panics turned into
// INTERNAL included.
func (m *Metrics) Interceptor(route Router) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, tally := roundtrip.With(ctx)
		start := time.Now()
		resp, err := h(ctx, req)
		took := time.Since(start)
		// The label is chosen after the call: by then the proxy has read
		// the connection's file (or found none), so a new connection's
		// first call already counts under its own name.
		conn := NoConnection
		if route != nil {
			if name, ok := route(req); ok {
				conn = m.conns.label(name)
			}
		}
		m.record(conn, shortMethod(info.FullMethod), took, status.Code(err), tally)
		return resp, err
	}
}

func (m *Metrics) record(conn, method string, took time.Duration, code codes.Code, tally *roundtrip.Tally) {
	c := m.callChildren(conn, method)
	c.calls.Inc()
	c.latency.Observe(took.Seconds())
	if code != codes.OK {
		m.errorCounter(c, conn, method, code).Inc()
	}
	var t *tripChildren
	for _, k := range roundtrip.Kinds {
		if n := tally.Get(k); n > 0 {
			if t == nil {
				t = m.tripChildren(conn)
			}
			t[k].Add(float64(n))
		}
	}
}

func (m *Metrics) callChildren(conn, method string) *callChildren {
	k := callKey{conn, method}
	m.mu.RLock()
	c := m.children[k]
	m.mu.RUnlock()
	if c != nil {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c = m.children[k]; c == nil {
		c = &callChildren{calls: m.calls.WithLabelValues(conn, method), latency: m.latency.WithLabelValues(conn, method)}
		m.children[k] = c
	}
	return c
}

func (m *Metrics) errorCounter(c *callChildren, conn, method string, code codes.Code) prometheus.Counter {
	if code >= numCodes { // not a code gRPC defines: count it, unresolved
		return m.errors.WithLabelValues(conn, method, code.String())
	}
	m.mu.RLock()
	e := c.errors[code]
	m.mu.RUnlock()
	if e != nil {
		return e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.errors[code] == nil {
		c.errors[code] = m.errors.WithLabelValues(conn, method, code.String())
	}
	return c.errors[code]
}

func (m *Metrics) tripChildren(conn string) *tripChildren {
	m.mu.RLock()
	t := m.trips[conn]
	m.mu.RUnlock()
	if t != nil {
		return t
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t = m.trips[conn]; t == nil {
		t = &tripChildren{}
		for _, k := range roundtrip.Kinds {
			t[k] = m.roundTrips.WithLabelValues(conn, k.String())
		}
		m.trips[conn] = t
	}
	return t
}

// shortMethod is "CreateVolume" of "/csi.v1.Controller/CreateVolume". gRPC
// dispatches only registered methods, so the values are bounded.
func shortMethod(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[i+1:]
	}
	return full
}
