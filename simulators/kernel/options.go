package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Exec runs a program and returns its standard output. A failure's error
// names the command and carries its exit status and standard error. stdin
// may hold secrets: implementations must not log it.
type Exec func(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)

// Options configure a Reconciler. The paths exist so that tests can point
// them at temporary directories.
type Options struct {
	ConfigFS  string // default /sys/kernel/config
	SysFS     string // default /sys: loop devices' backing files and sizes
	MountInfo string // default /proc/self/mountinfo: what is mounted
	// StateDir holds the ownership ledger, its lock, smb.conf and Samba's
	// state. Default /run/switchyard-kernel: tmpfs, cleared with the
	// kernel's own state at boot.
	StateDir string
	// ExportsDir gets one switchyard-<owner>.exports file per owner
	// (default /etc/exports.d, which exportfs -ra reads).
	ExportsDir string
	// SMBUsers are the accounts (name -> password) SMB clients log in
	// with; they are created (useradd, smbpasswd -a) when smbd starts.
	SMBUsers map[string]string
	// NFSThreads is the number of nfsd threads (default 8).
	NFSThreads int
	// NFSD is where nfsd's filesystem is mounted (default /proc/fs/nfsd).
	NFSD string
	// SMBAddr is where smbd is awaited after it starts (default
	// 127.0.0.1:445).
	SMBAddr string
	Exec    Exec         // default: run the program (os/exec)
	FS      FS           // configfs access; default: the real filesystem
	Log     *slog.Logger // nil: discard
}

// Reconciler changes the kernel to serve the owners' States.
type Reconciler struct {
	o   Options
	log *slog.Logger

	mu        sync.Mutex // one Apply at a time in this process; the ledger lock covers others
	smbUsers  bool       // the SMB accounts exist
	nfsdReady bool       // this process saw nfsd serving
	// exportsDirty and smbDirty: a changed exports file or smb.conf was
	// not yet taken in (exportfs or smbcontrol failed); the next Apply
	// retries.
	exportsDirty, smbDirty bool
}

const (
	ledgerFile    = "ledger.json"
	ledgerLock    = "ledger.lock"
	exportsPrefix = "switchyard-"
	nfsdMount     = "/proc/fs/nfsd"
	cmdTimeout    = 60 * time.Second
)

// New returns a Reconciler; nothing on the machine changes until Apply.
func New(o Options) *Reconciler {
	if o.ConfigFS == "" {
		o.ConfigFS = "/sys/kernel/config"
	}
	if o.SysFS == "" {
		o.SysFS = "/sys"
	}
	if o.MountInfo == "" {
		o.MountInfo = "/proc/self/mountinfo"
	}
	if o.StateDir == "" {
		o.StateDir = "/run/switchyard-kernel"
	}
	if o.ExportsDir == "" {
		o.ExportsDir = "/etc/exports.d"
	}
	if o.NFSThreads <= 0 {
		o.NFSThreads = 8
	}
	if o.NFSD == "" {
		o.NFSD = nfsdMount
	}
	if o.SMBAddr == "" {
		o.SMBAddr = "127.0.0.1:445"
	}
	if o.Exec == nil {
		o.Exec = runCommand
	}
	if o.FS == nil {
		o.FS = osFS{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Reconciler{o: o, log: o.Log.With("component", "kernel")}
}

// modules are loaded by Available: the targets, loop devices and nfsd.
var modules = []string{"configfs", "loop", "nvmet", "nvmet-tcp", "target_core_mod", "iscsi_target_mod", "target_core_iblock", "nfsd"}

// Available loads the kernel modules the targets need and reports whether
// their configfs trees are there; reason says what is missing. On a kernel
// without modules (the lab's host machines) it is false.
func (r *Reconciler) Available() (ok bool, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	var missing []string
	for _, m := range modules {
		if _, err := r.o.Exec(ctx, nil, "modprobe", m); err != nil {
			missing = append(missing, err.Error())
		}
	}
	for _, d := range []string{"nvmet", "target"} {
		if st, err := os.Stat(filepath.Join(r.o.ConfigFS, d)); err != nil || !st.IsDir() {
			missing = append(missing, fmt.Sprintf("%s is missing (is configfs mounted at %s?)", filepath.Join(r.o.ConfigFS, d), r.o.ConfigFS))
		}
	}
	if len(missing) > 0 {
		return false, "kernel targets unavailable: " + strings.Join(missing, "; ")
	}
	return true, ""
}

// runCommand is the default Exec.
func runCommand(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	// Daemons (rpcbind, rpc.mountd, smbd -D) fork and may keep our pipes:
	// once the command itself has exited, do not wait for them.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		err = nil
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if msg != "" {
			return out.Bytes(), fmt.Errorf("%s: %v: %s", commandLine(name, args), err, msg)
		}
		return out.Bytes(), fmt.Errorf("%s: %v", commandLine(name, args), err)
	}
	return out.Bytes(), nil
}

var unsafeArg = regexp.MustCompile(`[^A-Za-z0-9_./:=,@+-]`)

// commandLine renders a command for messages (arguments never hold secrets:
// those go through stdin or configfs).
func commandLine(name string, args []string) string {
	parts := []string{name}
	for _, a := range args {
		if a == "" || unsafeArg.MatchString(a) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// run runs a command with the reconciler's Exec and a timeout.
func (r *Reconciler) run(name string, args ...string) (string, error) {
	return r.runIn(nil, name, args...)
}

func (r *Reconciler) runIn(stdin []byte, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	start := time.Now()
	out, err := r.o.Exec(ctx, stdin, name, args...)
	r.log.Debug("exec", "cmd", commandLine(name, args), "seconds", time.Since(start).Seconds(), "failed", err != nil)
	return string(out), err
}
