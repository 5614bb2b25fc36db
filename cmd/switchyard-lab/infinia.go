package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/simulators/infinia"
)

// infiniaCmd runs the DDN Infinia REST simulator until ctx ends (SIGINT,
// SIGTERM).
func infiniaCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("infinia", flag.ContinueOnError)
	fset.SetOutput(stderr)
	listen := fset.String("listen", "127.0.0.1:8443", "address of the REST API")
	state := fset.String("state", "", "state directory (required): the object tree, the volumes' data files, the TLS certificate")
	plain := fset.Bool("plain", false, "serve http instead of https")
	ttl := fset.Duration("token-ttl", 0, "lifetime of a login token (default 1h)")
	latency := fset.Duration("latency", 0, "delay every REST call by this much")
	errorRate := fset.Float64("error-rate", 0, "probability that a REST call fails with 503 \"injected fault\"")
	seed := fset.Uint64("seed", 1, "seed of the random error rate")
	verbose := fset.Bool("v", false, "log requests (never passwords or tokens)")
	useKernel := fset.Bool("kernel", false, "serve exposed subsystems for real with this machine's nvmet (the lab's storage VM)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if !strings.HasPrefix(msg, "infinia: ") {
			msg = "infinia: " + msg
		}
		fmt.Fprintln(stderr, msg)
		return 2
	}
	if *state == "" {
		return fail("--state is required")
	}
	if *ttl < 0 {
		return fail("--token-ttl must not be negative")
	}
	if *errorRate < 0 || *errorRate > 1 {
		return fail("--error-rate must be between 0 and 1")
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// Without --kernel the exposed subsystems exist only in the REST
	// model; with it each one becomes an nvmet subsystem listening on the
	// simulator's data addresses, so a real initiator can connect.
	var target infinia.Target
	if *useKernel {
		k, err := newKernel(log, "", "")
		if err != nil {
			return fail("--kernel: %v", err)
		}
		target = infiniahost.KernelTarget(k.Incremental("infinia"))
	}
	srv, err := infinia.New(infinia.Options{
		StateDir:  *state,
		Plain:     *plain,
		TokenTTL:  *ttl,
		FaultSeed: *seed,
		Logger:    log,
		Target:    target,
	})
	if err != nil {
		return fail("%v", err)
	}
	defer srv.Close()
	srv.Faults().SetLatency("", *latency)
	srv.Faults().SetErrorRate("", *errorRate)
	if err := srv.Start(*listen); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "infinia REST API  %s/redapi/v1\n", srv.URL())
	for _, a := range srv.Accounts() {
		fmt.Fprintf(stdout, "account           %s (password %s)\n", a.Key(), a.Password)
	}
	if pem := srv.CertPEM(); pem != nil {
		caFile := filepath.Join(*state, "ca.pem")
		if err := os.WriteFile(caFile, pem, 0o644); err != nil {
			return fail("writing the CA certificate: %v", err)
		}
		fmt.Fprintf(stdout, "CA certificate    %s\n", caFile)
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, "infinia: closing:", err)
		return 1
	}
	return 0
}
