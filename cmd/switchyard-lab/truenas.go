package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/truenas"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// apiKeyFlags collects repeated --api-key name=key flags.
type apiKeyFlags map[string]string

func (f apiKeyFlags) String() string { return fmt.Sprint(len(f), " keys") }

func (f apiKeyFlags) Set(v string) error {
	name, key, ok := strings.Cut(v, "=")
	if !ok || name == "" || key == "" {
		return fmt.Errorf("want name=key, e.g. ci=1-<64 letters and digits>")
	}
	f[name] = key
	return nil
}

// truenasCmd runs the TrueNAS middleware simulator until ctx ends.
func truenasCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("truenas", flag.ContinueOnError)
	fset.SetOutput(stderr)
	listen := fset.String("listen", "127.0.0.1:8080", "address of the API (http/ws; https/wss with --tls)")
	state := fset.String("state", "", "state directory (required): the ZFS pool, shares, targets, API key state, TLS certificate")
	version := fset.String("version", "", "TrueNAS release to simulate (required): 24.10, 25.04, 25.10 or 26.04, optionally with a patch level")
	useTLS := fset.Bool("tls", false, "serve --listen with TLS (self-signed certificate)")
	tlsListen := fset.String("tls-listen", "", "also serve https/wss on this address, like a real TrueNAS on 443 beside 80")
	sshListen := fset.String("ssh-listen", "", "also serve SSH (zfs, zpool, targetcli, nvmetcli) on this address, for --user/--password")
	user := fset.String("user", "root", "login name for the API and SSH")
	password := fset.String("password", "", "password of --user (without it and without --api-key: root/secret)")
	keys := apiKeyFlags{}
	fset.Var(keys, "api-key", "root's API key name=<id>-<64 letters and digits> (repeatable)")
	pool := fset.String("pool", "tank", "pool name")
	poolSize := fset.String("pool-size", "100G", "size of the pool when it is created, in bytes or with a K, M, G or T suffix")
	hostname := fset.String("hostname", "truenas", "host name reported by system.info and SSH")
	maxCalls := fset.Int("max-concurrent-calls", 20, "calls in flight per WebSocket connection before -32000")
	latency := fset.Duration("latency", 0, "delay every method call by this much")
	errorRate := fset.Float64("error-rate", 0, "probability that a method call fails with \"injected fault\"")
	seed := fset.Uint64("seed", 1, "seed of the random error rate")
	verbose := fset.Bool("v", false, "log connections and calls (never parameters or credentials)")
	useKernel := fset.Bool("kernel", false, "serve the shares and iSCSI/NVMe-oF targets for real through this machine's kernel (the lab's storage VM); --user/--password is also the SMB account")
	fresh := fset.Bool("fresh", false, "start as a freshly installed TrueNAS (no iSCSI portal or initiator group, services stopped); without it the lab configures what an admin does before using a CSI driver (portal 1, initiator group 1, NFS/SMB/iSCSI/NVMe-oF services and port)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if !strings.HasPrefix(msg, "truenas: ") { // the simulator's errors carry it already
			msg = "truenas: " + msg
		}
		fmt.Fprintln(stderr, msg)
		return 2
	}
	if *state == "" {
		return fail("--state is required")
	}
	if *version == "" {
		return fail("--version is required (24.10, 25.04, 25.10 or 26.04)")
	}
	v, err := middleware.ParseVersion(*version)
	if err != nil {
		return fail("--version: %v", err)
	}
	size, err := parseSize(*poolSize)
	if err != nil {
		return fail("--pool-size %q: %v", *poolSize, err)
	}
	var users map[string]string
	defaulted := false
	if *password != "" {
		users = map[string]string{*user: *password}
	} else if len(keys) == 0 {
		// Options' default account, spelled out so SSH can use it too.
		*user, *password, defaulted = "root", "secret", true
		users = map[string]string{"root": "secret"}
	}
	if *sshListen != "" && *password == "" {
		return fail("--ssh-listen needs --password for the SSH login")
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var k *kernel.Reconciler
	if *useKernel {
		if k, err = newKernel(log, *user, *password); err != nil {
			return fail("--kernel: %v", err)
		}
	}
	srv, err := truenas.New(truenas.Options{
		Version:            v,
		StateDir:           *state,
		Pools:              []zfsmodel.PoolSpec{{Name: *pool, Size: size}},
		Users:              users,
		APIKeys:            keys,
		TLS:                *useTLS,
		MaxConcurrentCalls: *maxCalls,
		Hostname:           *hostname,
		FaultSeed:          *seed,
		Logger:             log,
		Kernel:             k,
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
	if !*fresh {
		if err := (&truenashost.Host{Server: srv, Version: v}).Prepare(); err != nil {
			return fail("admin set-up: %v", err)
		}
	}
	if *tlsListen != "" {
		if err := srv.StartTLS(*tlsListen); err != nil {
			return fail("%v", err)
		}
	}
	fmt.Fprintf(stdout, "truenas %s (%s) on pool %s\n", v, v.Product(), *pool)
	for _, u := range []string{srv.PlainURL(), srv.TLSURL()} {
		if u == "" {
			continue
		}
		ws := strings.Replace(strings.Replace(u, "https://", "wss://", 1), "http://", "ws://", 1)
		if !v.AtLeast(26, 0, 0) {
			fmt.Fprintf(stdout, "REST      %s/api/v2.0\n", u)
		}
		if v.AtLeast(25, 4, 0) {
			fmt.Fprintf(stdout, "JSON-RPC  %s/api/current\n", ws)
		}
		fmt.Fprintf(stdout, "legacy    %s/websocket\n", ws)
	}
	if srv.TLSURL() != "" {
		fmt.Fprintf(stdout, "TLS certificate (PEM) written to %s\n", srv.CertFile())
	}
	if *sshListen != "" {
		addr, err := srv.StartSSH(*sshListen, map[string]zfsssh.User{*user: {Password: *password}})
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(stdout, "SSH       %s (user %s)\n", addr, *user)
	}
	if defaulted {
		fmt.Fprintln(stdout, "login     root / secret (the default account)")
	} else if *password != "" {
		fmt.Fprintf(stdout, "login     %s (password from --password)\n", *user)
	}
	for name := range keys {
		fmt.Fprintf(stdout, "API key   %s\n", name)
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, "truenas: closing:", err)
		return 1
	}
	return 0
}
