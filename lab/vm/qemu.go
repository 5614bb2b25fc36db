package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults of RunOptions.
const (
	DefaultMemoryMB = 2048
	DefaultCPUs     = 2
	DefaultTimeout  = 15 * time.Minute
)

// GuestAddr is the VM's address on QEMU's user network; it exists only
// inside the VM: the host reaches forwarded ports on 127.0.0.1.
const GuestAddr = "10.0.2.15"

// PortForward forwards 127.0.0.1:HostPort on the host to GuestPort in the VM.
type PortForward struct {
	HostPort  int
	GuestPort int
}

// RunOptions tune one boot.
type RunOptions struct {
	// Share is the host directory mounted at /lab in the VM; its run.sh runs
	// as root, and rc receives the exit code. Required unless Stdin is set.
	Share string
	// Udev starts systemd-udevd (for /dev/disk/by-* links; about 3 s more).
	Udev     bool
	MemoryMB int // default DefaultMemoryMB
	CPUs     int // default DefaultCPUs
	// Forward enables a network card (QEMU user networking with
	// restrict=on: the VM reaches nothing outside) with these host ports.
	Forward []PortForward
	Timeout time.Duration // of the whole boot; default DefaultTimeout
	// Console receives the serial console as it comes.
	Console io.Writer
	// Stdin, when set, is the console's input: an interactive boot. Without
	// a run.sh in Share the VM then starts a shell.
	Stdin io.Reader
}

// Result of a boot.
type Result struct {
	// ExitCode of /lab/run.sh; -1 when it did not finish.
	ExitCode int
	// Console is the end of the serial console output.
	Console string
	// BootSeconds is the time from starting QEMU to the init's
	// "base-ready" (filesystems and configfs mounted); 0 if never reached.
	BootSeconds float64
	// Wall is the time from starting QEMU to its exit.
	Wall time.Duration
}

const consoleTail = 64 * 1024

// Run boots img, runs the share's run.sh and waits for the VM to power off.
// QEMU is killed when ctx ends or the timeout passes; the error says so. The
// Result is returned with every error that happens after QEMU started.
func (img *Image) Run(ctx context.Context, o RunOptions) (*Result, error) {
	o = withRunDefaults(o)
	if o.Share == "" {
		if o.Stdin == nil {
			return nil, errors.New("vm: RunOptions.Share is required (the directory holding run.sh)")
		}
		tmp, err := os.MkdirTemp("", "switchyard-vm-share-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		o.Share = tmp
	}
	share, err := filepath.Abs(o.Share)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(share); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("vm: share %s is not a directory", o.Share)
	}
	o.Share = share
	rcPath := filepath.Join(share, "rc")
	for _, f := range []string{rcPath, filepath.Join(share, "run.log")} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("vm: clearing the share: %w", err)
		}
	}
	qemu, err := lookTool("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}

	tail := &tailBuffer{max: consoleTail}
	stderr := &tailBuffer{max: 8192}
	var mu sync.Mutex
	var boot time.Duration
	start := time.Now()
	watch := &lineWatcher{onLine: func(line string) {
		if strings.Contains(line, "LAB: base-ready") {
			mu.Lock()
			if boot == 0 {
				boot = time.Since(start)
			}
			mu.Unlock()
		}
	}}
	outs := []io.Writer{tail, watch}
	if o.Console != nil {
		outs = append(outs, o.Console)
	}
	cmd := exec.Command(qemu, qemuArgs(img, o)...)
	cmd.Stdout = io.MultiWriter(outs...)
	cmd.Stderr = stderr
	cmd.Stdin = o.Stdin
	// Its own process group: killing QEMU must not depend on its children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vm: starting qemu: %w", err)
	}
	done := make(chan struct{})
	killedc := make(chan error, 1)
	go func() {
		timer := time.NewTimer(o.Timeout)
		defer timer.Stop()
		var why error
		select {
		case <-done:
			killedc <- nil
			return
		case <-ctx.Done():
			why = fmt.Errorf("vm: qemu killed after %s: %w", time.Since(start).Round(time.Second), ctx.Err())
		case <-timer.C:
			why = fmt.Errorf("vm: qemu killed: the boot took longer than its timeout of %s", o.Timeout)
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		killedc <- why
	}()
	waitErr := cmd.Wait()
	close(done)
	killed := <-killedc
	res := &Result{ExitCode: -1, Wall: time.Since(start), Console: string(tail.Bytes())}
	mu.Lock()
	res.BootSeconds = boot.Seconds()
	mu.Unlock()
	if killed != nil {
		return res, fmt.Errorf("%w; console ends with:\n%s", killed, lastLines(res.Console, 15))
	}
	if waitErr != nil {
		return res, fmt.Errorf("vm: qemu: %v: %s; console ends with:\n%s", waitErr,
			strings.TrimSpace(string(stderr.Bytes())), lastLines(res.Console, 15))
	}
	b, err := os.ReadFile(rcPath)
	if err != nil {
		if o.Stdin != nil {
			return res, nil // an interactive boot need not run anything
		}
		return res, fmt.Errorf("vm: the VM powered off but run.sh did not finish (no %s); console ends with:\n%s",
			rcPath, lastLines(res.Console, 15))
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return res, fmt.Errorf("vm: %s holds %q, not an exit code", rcPath, b)
	}
	res.ExitCode = code
	return res, nil
}

func withRunDefaults(o RunOptions) RunOptions {
	if o.MemoryMB <= 0 {
		o.MemoryMB = DefaultMemoryMB
	}
	if o.CPUs <= 0 {
		o.CPUs = DefaultCPUs
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// qemuArgs is the QEMU command line: TCG (the lab machines' /dev/kvm cannot
// run a stock kernel), the image's disk with snapshot=on so the cache is
// never written, the share over 9p, and no network card unless ports are
// forwarded.
func qemuArgs(img *Image, o RunOptions) []string {
	// mitigations=off: TCG's CPU has no PCID, so page-table isolation would
	// flush QEMU's software TLB on every system call (twice as slow).
	// net.ifnames=0 keeps the card eth0 when udev runs.
	cmdline := []string{"console=ttyS0", "quiet", "root=/dev/vda", "rw", "panic=-1", "mitigations=off", "net.ifnames=0"}
	if !o.Udev {
		cmdline = append(cmdline, "lab.noudev")
	}
	nic := "none"
	if len(o.Forward) > 0 {
		cmdline = append(cmdline, "lab.net")
		nic = "user,model=virtio-net-pci,restrict=on"
		for _, f := range o.Forward {
			nic += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-:%d", f.HostPort, f.GuestPort)
		}
	}
	return []string{
		"-accel", "tcg,thread=multi", "-cpu", "max",
		"-m", strconv.Itoa(o.MemoryMB), "-smp", strconv.Itoa(o.CPUs),
		"-nographic", "-no-reboot",
		"-kernel", img.Kernel, "-initrd", img.Initrd,
		"-append", strings.Join(cmdline, " "),
		"-drive", "file=" + qemuEscape(img.Disk) + ",if=virtio,format=raw,snapshot=on",
		"-virtfs", "local,path=" + qemuEscape(o.Share) + ",mount_tag=lab,security_model=none,id=lab",
		"-nic", nic,
	}
}

// qemuEscape doubles commas, QEMU's option separator, in a path.
func qemuEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// for PortForward.HostPort.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
