package main

import (
	"errors"
	"log/slog"
	"time"

	"github.com/switchyard-csi/switchyard/driver/assembly"
	"github.com/switchyard-csi/switchyard/driver/events"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// watchConnections gives the proxy (when this is one) its connection
// observers: the metrics' (when on) and Kubernetes Events (when the driver
// runs in a cluster). It returns the function that stops the events.
func watchConnections(p *assembly.Plugin, csiName string, log *slog.Logger, metricsObs proxy.Observer) (stop func()) {
	stop = func() {}
	if p.Connections == nil {
		return stop
	}
	var obs observers
	if metricsObs != nil {
		obs = append(obs, metricsObs)
	}
	o, err := events.InClusterOptions(events.Env{})
	switch {
	case errors.Is(err, events.ErrNotInCluster):
		log.Debug("kubernetes events off", "why", err.Error())
	case err != nil:
		log.Warn("kubernetes events off: "+err.Error(), "connection_files", "broken files are still logged and counted in switchyard_connection_config_error")
	default:
		o.Controller, o.Log = csiName, log
		r := events.New(o)
		obs = append(obs, r)
		stop = func() { r.Close(5 * time.Second) }
		log.Info("kubernetes events on", "pod", o.Pod.Namespace+"/"+o.Pod.Name)
	}
	switch len(obs) {
	case 0:
	case 1:
		p.Connections.SetObserver(obs[0])
	default:
		p.Connections.SetObserver(obs)
	}
	return stop
}

// observers tells each of several observers, in order (proxy.Connections
// takes one).
type observers []proxy.Observer

func (all observers) ConnectionLoaded(name, file string, err error) {
	for _, o := range all {
		o.ConnectionLoaded(name, file, err)
	}
}

func (all observers) ConnectionRemoved(name string) {
	for _, o := range all {
		o.ConnectionRemoved(name)
	}
}
