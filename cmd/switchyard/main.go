// Command switchyard is the CSI driver. It takes democratic-csi's flags, so
// an existing deployment can switch binaries without changing its manifests:
//
//	switchyard --driver-config-file=/config/driver-config-file.yaml \
//	  --csi-name=org.democratic-csi.proxy --csi-version=1.5.0 \
//	  --csi-mode=controller --csi-mode=node --server-socket=/csi-data/csi.sock
//
// `switchyard config check <main.yaml>` validates a main config and every
// connection file it names, one line per problem.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends" // every backend
	"github.com/switchyard-csi/switchyard/driver/assembly"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// version is stamped at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) >= 1 && args[0] == "config" {
		return configCmd(args[1:], stdout, stderr)
	}
	if len(args) >= 1 && args[0] == "orphans" {
		return orphansCmd(args[1:], stdout, stderr)
	}
	if len(args) >= 1 && args[0] == "connections" {
		return connectionsCmd(args[1:], stdout, stderr)
	}
	return serve(args, stderr)
}

type modes []string

func (m *modes) String() string     { return strings.Join(*m, ",") }
func (m *modes) Set(v string) error { *m = append(*m, strings.Split(v, ",")...); return nil }

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("switchyard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgFile  = fs.String("driver-config-file", "", "main config file (democratic-csi schema); ${VAR} is expanded from the environment")
		csiName  = fs.String("csi-name", "", "CSI driver name, e.g. org.democratic-csi.proxy")
		csiVer   = fs.String("csi-version", "1.5.0", "CSI spec version to speak (1.x; accepted for democratic-csi compatibility)")
		socket   = fs.String("server-socket", "", "unix socket to serve on, e.g. /csi-data/csi.sock")
		address  = fs.String("server-address", "", "TCP address to serve on (with --server-port) instead of a socket")
		port     = fs.Int("server-port", 0, "TCP port (with --server-address)")
		logLevel = fs.String("log-level", "info", "error, warn, info, debug (democratic-csi's verbose and silly mean debug)")
		stateDir = fs.String("node-state-dir", assembly.DefaultStateDir, "where the node keeps its per-volume records")
		stopWait = fs.Duration("shutdown-timeout", 30*time.Second, "how long SIGTERM waits for in-flight calls")
		showVer  = fs.Bool("version", false, "print the version and exit")
		metAddr  = fs.String("metrics-address", "", "serve Prometheus metrics at http://<address>/metrics, e.g. :9808 or 127.0.0.1:9808 (default off)")
		// external-health-monitor v0.18.0, its newest release, speaks only
		// CSI 1.12's VOLUME_CONDITION; see driver/proxy/health_legacy.go. Off
		// by default: it costs one health check per volume a listing returns.
		legacyVC = fs.Bool("legacy-volume-condition", false, "also answer in CSI 1.12's VOLUME_CONDITION form, for external-health-monitor v0.18.0 (the chart sets it with the health monitor)")
		csiModes modes
	)
	fs.Var(&csiModes, "csi-mode", "controller and/or node (repeatable or comma-separated; default both)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVer {
		fmt.Fprintln(stderr, "switchyard", version)
		return 0
	}
	log, err := newLogger(*logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "switchyard:", err)
		return 2
	}
	// mount-utils logs through klog: send it to the same structured log.
	klog.SetSlogLogger(log)
	fail := func(format string, a ...any) int {
		log.Error(fmt.Sprintf(format, a...))
		return 1
	}
	switch {
	case *cfgFile == "":
		return fail("--driver-config-file is required")
	case *csiName == "":
		return fail("--csi-name is required")
	case !strings.HasPrefix(*csiVer, "1."):
		return fail("--csi-version %q: switchyard speaks CSI 1.x", *csiVer)
	}
	endpoint := *socket
	if *address != "" || *port != 0 {
		if *address == "" || *port == 0 {
			return fail("--server-address and --server-port go together")
		}
		endpoint = "tcp://" + net.JoinHostPort(*address, strconv.Itoa(*port))
	}
	if endpoint == "" {
		return fail("give --server-socket or --server-address with --server-port")
	}

	p, err := assembly.New(assembly.Options{ConfigFile: *cfgFile, CSIName: *csiName, CSIVersion: version,
		Modes: csiModes, NodeName: os.Getenv("CSI_NODE_ID"), StateDir: *stateDir, Logger: log})
	if err != nil {
		var ps config.Problems
		if errors.As(err, &ps) {
			for _, pr := range ps {
				log.Error("config: " + pr.Error())
			}
			return 1
		}
		return fail("%v", err)
	}
	stopMetrics, outer, metricsObs, err := startMetrics(*metAddr, p, log)
	if err != nil {
		p.Close()
		return fail("%v", err)
	}
	defer stopMetrics()
	stopEvents := watchConnections(p, *csiName, log, metricsObs)
	defer stopEvents()
	if *legacyVC {
		outer = append(outer, proxy.LegacyVolumeCondition(p.Controller))
	}
	srv := p.NewServer(log, outer...)
	l, err := listen(endpoint)
	if err != nil {
		p.Close()
		return fail("%v", err)
	}
	p.Identity.SetReady(true)
	log.Info("serving", "endpoint", endpoint, "csi_name", *csiName, "version", version, "modes", csiModes.String())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case s := <-sig:
		log.Info("stopping: waiting for in-flight calls", "signal", s.String())
		p.Identity.SetReady(false)
		ctx, cancel := context.WithTimeout(context.Background(), *stopWait)
		srv.Stop(ctx)
		cancel()
	case err := <-served:
		if err != nil {
			p.Close()
			return fail("serving: %v", err)
		}
	}
	p.Close()
	log.Info("stopped")
	return 0
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "error":
		l = slog.LevelError
	case "warn", "warning":
		l = slog.LevelWarn
	case "info", "":
		l = slog.LevelInfo
	case "debug", "verbose", "silly":
		l = slog.LevelDebug
	default:
		return nil, fmt.Errorf("--log-level %q: use error, warn, info or debug", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
