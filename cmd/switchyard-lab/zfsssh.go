package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// zfsSSHCmd runs the ZFS-over-SSH simulator on the real ZFS model until ctx
// ends (SIGTERM, ^C).
func zfsSSHCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("zfs-ssh", flag.ContinueOnError)
	fset.SetOutput(stderr)
	listen := fset.String("listen", "127.0.0.1:2222", "address to listen on")
	state := fset.String("state", "", "state directory (required): the ZFS pool, the LIO/nvmet configuration and the host key")
	user := fset.String("user", "root", "login name")
	password := fset.String("password", "", "password of --user")
	keys := fset.String("authorized-keys", "", "authorized_keys file of --user")
	sudo := fset.Bool("sudo", false, "let a non-root --user run sudo without a password")
	pool := fset.String("pool", "tank", "pool name")
	poolSize := fset.String("pool-size", "100G", "size of the pool when it is created, in bytes or with a K, M, G or T suffix")
	maxSessions := fset.Int("max-sessions", 10, "concurrent sessions per connection (OpenSSH's MaxSessions)")
	nvmetPort := fset.String("nvmet-port", "1=tcp:127.0.0.1:4420", "nvmet port present at start, id=trtype:address:port (empty: none)")
	hostname := fset.String("hostname", "zfs-sim", "host name reported by uname")
	latency := fset.Duration("latency", 0, "delay every command by this much (the host's own work per command)")
	rttLatency := fset.Duration("rtt-latency", 0, "delay every SSH exec once by this much (a network round trip, whatever the command line runs)")
	errorRate := fset.Float64("error-rate", 0, "probability that a command fails with \"injected fault\"")
	dropAfter := fset.Int("drop-after", 0, "drop the connection running the N-th command (after it took effect)")
	seed := fset.Uint64("seed", 1, "seed of the random error rate")
	verbose := fset.Bool("v", false, "log connections and commands (secrets redacted)")
	useKernel := fset.Bool("kernel", false, "serve the nvmet/LIO targets and sharenfs/sharesmb for real through this machine's kernel (the lab's storage VM); --user/--password is also the SMB account")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "zfs-ssh: "+format+"\n", a...)
		return 2
	}
	if *state == "" {
		return fail("--state is required")
	}
	size, err := parseSize(*poolSize)
	if err != nil {
		return fail("--pool-size %q: %v", *poolSize, err)
	}
	u := zfsssh.User{Password: *password, Sudo: *sudo}
	if *keys != "" {
		if u.AuthorizedKeys, err = readAuthorizedKeys(*keys); err != nil {
			return fail("--authorized-keys: %v", err)
		}
	}
	if u.Password == "" && len(u.AuthorizedKeys) == 0 {
		return fail("give --password or --authorized-keys for --user %s", *user)
	}
	var ports []zfsssh.NVMetPort
	if *nvmetPort != "" {
		p, err := parseNVMetPort(*nvmetPort)
		if err != nil {
			return fail("--nvmet-port %q: %v", *nvmetPort, err)
		}
		ports = append(ports, p)
	}
	hostKey, err := loadHostKey(filepath.Join(*state, "ssh_host_ed25519_key"))
	if err != nil {
		return fail("host key: %v", err)
	}
	model, err := zfsmodel.Open(zfsmodel.Options{StateDir: filepath.Join(*state, "zfs"), Pools: []zfsmodel.PoolSpec{{Name: *pool, Size: size}}})
	if err != nil {
		return fail("%v", err)
	}
	defer model.Close()
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
	srv, err := zfsssh.New(zfsssh.Options{
		Host:        model,
		Users:       map[string]zfsssh.User{*user: u},
		HostKey:     hostKey,
		MaxSessions: *maxSessions,
		StateDir:    filepath.Join(*state, "ssh"),
		Hostname:    *hostname,
		NVMetPorts:  ports,
		FaultSeed:   *seed,
		Logger:      log,
		Kernel:      k,
	})
	if err != nil {
		return fail("%v", err)
	}
	f := srv.Faults()
	f.SetLatency("", *latency)
	f.SetRoundTripLatency(*rttLatency)
	f.SetErrorRate("", *errorRate)
	f.DropAfter(*dropAfter)
	addr, err := srv.Start(*listen)
	if err != nil {
		srv.Close()
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "zfs-ssh listening on %s (user %s, pool %s)\n", addr, *user, *pool)
	fmt.Fprintf(stdout, "host key %s %s\n", hostKey.PublicKey().Type(), ssh.FingerprintSHA256(hostKey.PublicKey()))
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, "zfs-ssh: saving state:", err)
		return 1
	}
	return 0
}

// parseSize reads 1073741824, 512M, 100G, 2T.
func parseSize(s string) (int64, error) {
	shift := 0
	switch strings.ToUpper(s[len(s)-min(len(s), 1):]) {
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	case "T":
		shift = 40
	}
	if shift > 0 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, errors.New("want a positive size such as 100G")
	}
	return n << shift, nil
}

// parseNVMetPort reads id=trtype:address:port, e.g. 1=tcp:127.0.0.1:4420.
func parseNVMetPort(s string) (zfsssh.NVMetPort, error) {
	id, rest, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(id)
	if !ok || err != nil || n < 1 {
		return zfsssh.NVMetPort{}, errors.New("want id=trtype:address:port")
	}
	trtype, hostport, ok := strings.Cut(rest, ":")
	i := strings.LastIndex(hostport, ":")
	if !ok || i <= 0 {
		return zfsssh.NVMetPort{}, errors.New("want id=trtype:address:port")
	}
	addr, svc := strings.Trim(hostport[:i], "[]"), hostport[i+1:]
	fam := "ipv4"
	if strings.Contains(addr, ":") {
		fam = "ipv6"
	}
	return zfsssh.NVMetPort{ID: n, Trtype: trtype, Adrfam: fam, Traddr: addr, Trsvcid: svc}, nil
}

func readAuthorizedKeys(file string) ([]ssh.PublicKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var keys []ssh.PublicKey
	for len(strings.TrimSpace(string(data))) > 0 {
		k, _, _, rest, err := ssh.ParseAuthorizedKey(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		keys = append(keys, k)
		data = rest
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s has no keys", file)
	}
	return keys, nil
}

// loadHostKey keeps the host key in the state directory, so clients that
// pinned its fingerprint still connect after a restart.
func loadHostKey(file string) (ssh.Signer, error) {
	data, err := os.ReadFile(file)
	if err == nil {
		return ssh.ParsePrivateKey(data)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "switchyard-lab zfs-ssh")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

// newKernel is --kernel: a reconciler for this machine's kernel, checked
// to have the target modules; user/password (if any) is the SMB account.
func newKernel(log *slog.Logger, user, password string) (*kernel.Reconciler, error) {
	var smb map[string]string
	if password != "" {
		smb = map[string]string{user: password}
	}
	k := kernel.New(kernel.Options{SMBUsers: smb, Log: log})
	if ok, reason := k.Available(); !ok {
		return nil, errors.New(reason)
	}
	return k, nil
}
