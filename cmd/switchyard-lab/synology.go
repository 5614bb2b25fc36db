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

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/synology"
)

// synologyCmd runs the Synology DSM Web API simulator until ctx ends.
func synologyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("synology", flag.ContinueOnError)
	fset.SetOutput(stderr)
	listen := fset.String("listen", "127.0.0.1:5001", "address of the Web API (DSM's https port is 5001, http 5000)")
	state := fset.String("state", "", "state directory (required): state.json, the LUN files, the shared folders, the TLS certificate")
	plain := fset.Bool("plain", false, "serve http instead of https")
	password := fset.String("password", synology.DefaultPassword, "the password of the account "+synology.DefaultUser)
	volSize := fset.Int64("volume-size", synology.DefaultVolumeSize, "size in bytes of /volume1 on a fresh state directory")
	ttl := fset.Duration("session-ttl", 0, "idle time after which a session ends (default 15m, as on DSM)")
	delay := fset.Duration("delete-delay", 0, "how long a deleted LUN stays listed as deleting (default 200ms)")
	withKernel := fset.Bool("kernel", false, "serve mapped LUNs over iSCSI (LIO), NFS shares over nfsd and SMB shares over samba (root, in the storage VM)")
	portal := fset.String("portal", "0.0.0.0", "with --kernel: the address the iSCSI targets listen on (port 3260)")
	verbose := fset.Bool("v", false, "log requests (never passwords or session ids)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if !strings.HasPrefix(msg, "synology: ") {
			msg = "synology: " + msg
		}
		fmt.Fprintln(stderr, msg)
		return 2
	}
	if *state == "" {
		return fail("--state is required")
	}
	if *volSize <= 0 {
		return fail("--volume-size must be positive")
	}
	if *ttl < 0 {
		return fail("--session-ttl must not be negative")
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o := synology.Options{
		StateDir: *state, Plain: *plain, Users: map[string]string{synology.DefaultUser: *password},
		Volumes: []synology.Volume{{Path: synology.DefaultVolume, Size: *volSize}}, SessionTTL: *ttl, DeleteDelay: *delay, Logger: log,
	}
	if *withKernel {
		k := kernel.New(kernel.Options{Log: log, SMBUsers: map[string]string{synology.DefaultUser: *password}})
		if ok, why := k.Available(); !ok {
			return fail("--kernel: this kernel has no storage targets: %s", why)
		}
		o.Kernel, o.Portals = k, []kernel.Portal{{Addr: *portal, Port: 3260}}
		defer func() {
			if err := k.Close(o.Owner); err != nil {
				fmt.Fprintln(stderr, "synology: removing the kernel targets:", err)
			}
		}()
		o.Owner = "synology"
	}
	srv, err := synology.New(o)
	if err != nil {
		return fail("%v", err)
	}
	defer srv.Close()
	if err := srv.Start(*listen); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "DSM Web API       %s/webapi/entry.cgi\n", srv.URL())
	fmt.Fprintf(stdout, "account           %s\n", synology.DefaultUser)
	if pem := srv.CertPEM(); pem != nil {
		caFile := filepath.Join(*state, "ca.pem")
		if err := os.WriteFile(caFile, pem, 0o644); err != nil {
			return fail("writing the CA certificate: %v", err)
		}
		fmt.Fprintf(stdout, "CA certificate    %s\n", caFile)
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, "synology: closing:", err)
		return 1
	}
	return 0
}
