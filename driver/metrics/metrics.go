// Package metrics is switchyard's Prometheus endpoint: CSI calls per
// connection and method (count, errors by gRPC code, latency), the backend
// round trips they made, the state of every connection file, and the
// process and Go runtime collectors. It uses a registry of its own, so
// nothing a library registers globally leaks into it.
//
// Label values are bounded: a connection label is a connection that has a
// file in the configured folder, or one of the fixed values below; never a
// volume id, node id, name or anything else a request carries.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Fixed connection label values. They start with '_', which no connection
// name may, so they never collide with a real connection.
const (
	// NoConnection: the call names no connection (identity and capability
	// calls, List*, NodeGetInfo), or the driver is a single backend.
	NoConnection = "_none"
	// UnknownConnection: the call names a connection that has no file, or
	// carries a handle that names no connection.
	UnknownConnection = "_unknown"
)

// Namespace prefixes every switchyard metric.
const Namespace = "switchyard"

// latencyBuckets span 1 ms (Probe, capability calls) to 60 s (a clone or a
// TrueNAS job), roughly ×2.5 per step.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Metrics holds the registry and every switchyard metric.
type Metrics struct {
	reg *prometheus.Registry

	calls      *prometheus.CounterVec
	errors     *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	roundTrips *prometheus.CounterVec

	loaded      *prometheus.GaugeVec
	configError *prometheus.GaugeVec
	lastReload  *prometheus.GaugeVec
	reloads     *prometheus.CounterVec

	conns connSet

	mu       sync.RWMutex
	children map[callKey]*callChildren // pre-resolved per connection and method
	trips    map[string]*tripChildren  // pre-resolved per connection
}

// New builds the metrics and their registry, with the process and Go
// collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "csi_calls_total",
			Help: "CSI calls finished, by connection and method."}, []string{"connection", "method"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "csi_call_errors_total",
			Help: "CSI calls that failed, by connection, method and gRPC code."}, []string{"connection", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "csi_call_duration_seconds",
			Help: "CSI call latency, by connection and method (lock waits included).", Buckets: latencyBuckets}, []string{"connection", "method"}),
		roundTrips: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "backend_round_trips_total",
			Help: "Round trips to storage systems made by CSI calls: SSH commands, HTTP requests, WebSocket calls."}, []string{"connection", "kind"}),
		loaded: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "connection_loaded",
			Help: "1 when the current version of the connection's file built a driver, 0 when it is broken."}, []string{"connection"}),
		configError: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "connection_config_error",
			Help: "1 for a connection whose current file fails to parse or validate (calls get FAILED_PRECONDITION); absent once fixed or removed."}, []string{"connection", "file"}),
		lastReload: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "connection_last_reload_timestamp_seconds",
			Help: "Unix time the connection's file was last (re)read after a change."}, []string{"connection"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "connection_reloads_total",
			Help: "New versions of the connection's file read (the first read included)."}, []string{"connection"}),
		children: map[callKey]*callChildren{},
		trips:    map[string]*tripChildren{},
	}
	m.conns.known = map[string]bool{}
	m.reg.MustRegister(m.calls, m.errors, m.latency, m.roundTrips, m.loaded, m.configError, m.lastReload, m.reloads,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector())
	return m
}

// Registry is what the endpoint serves (and tests gather).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
