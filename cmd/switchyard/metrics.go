package main

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/switchyard-csi/switchyard/driver/assembly"
	"github.com/switchyard-csi/switchyard/driver/metrics"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// startMetrics serves /metrics on address (nothing when it is empty) and
// returns the interceptor that feeds it, the connection observer that keeps
// its connection_* series (nil without metrics or without a proxy; main
// gives it to the proxy with the other observers) and the function that
// stops it.
func startMetrics(address string, p *assembly.Plugin, log *slog.Logger) (stop func(), outer []grpc.UnaryServerInterceptor, obs proxy.Observer, err error) {
	if address == "" {
		return func() {}, nil, nil, nil
	}
	m := metrics.New()
	var route metrics.Router
	if p.Connections != nil {
		obs = m.ConnectionState()
		route = metrics.ProxyRouter(p.Connections.DefaultConnection())
	}
	s, err := m.Listen(address, log)
	if err != nil {
		return nil, nil, nil, err
	}
	// The resolved address: with port 0 this is how a test finds the port.
	log.Info("serving metrics", "address", s.Addr().String(), "path", "/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Stop(ctx)
	}, []grpc.UnaryServerInterceptor{m.Interceptor(route)}, obs, nil
}
