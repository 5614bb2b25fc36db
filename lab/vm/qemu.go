package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
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

// PortForward forwards HostAddr:HostPort on the host to GuestPort in the VM.
type PortForward struct {
	HostPort  int
	GuestPort int
	// HostAddr is a local address of the host; default 127.0.0.1. (A
	// Kubernetes node in the VM gets an address of its own, so that the
	// apiserver reaches its kubelet at the node's InternalIP.)
	HostAddr string
}

// GuestForward lets the VM reach a host service: a connection to
// GuestAddr:GuestPort inside the VM becomes one to 127.0.0.1:HostPort on the
// host. QEMU starts one socat (on the host) per connection: its plain tcp:
// chardev form would serve only one connection at a time, which a kubelet
// talking to an apiserver outgrows at once.
type GuestForward struct {
	// GuestAddr is an otherwise unused address of QEMU's user network
	// 10.0.2.0/24 (not .2, .3, .15: the gateway, DNS and the guest),
	// e.g. APIServerGuestAddr.
	GuestAddr string
	GuestPort int
	HostPort  int
}

// APIServerGuestAddr is the address at which the lab's guests reach the
// host's Kubernetes apiserver (see GuestForward).
const APIServerGuestAddr = "10.0.2.100"

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
	// GuestForward enables the network card too, with these ways out to
	// host services (restrict=on still blocks everything else). They need
	// socat on the host.
	GuestForward []GuestForward
	// Disks are more raw disk images, attached after the root disk
	// (/dev/vdb, ...) and, like it, as throw-away snapshots: the guest's
	// writes never reach the files, so a cached disk stays as it was.
	Disks []string
	// Timeout of the whole boot; Run's default is DefaultTimeout, Start
	// has none.
	Timeout time.Duration
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
	m, err := img.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	res, err := m.Wait()
	if sig := m.crashedInBoot(); sig != nil && ctx.Err() == nil {
		// QEMU 7.2's TCG has crashed in the BIOS, before the guest ran
		// anything (seen once in ~100 CI boots). The emulator failed, not
		// the guest; the disks are snapshot=on and run.sh never started,
		// so one more boot is safe.
		if o.Console != nil {
			fmt.Fprintf(o.Console, "\nvm: QEMU crashed (%v) before the guest's init started; booting once more\n", sig)
		}
		if m, err = img.Start(ctx, o); err != nil {
			return nil, err
		}
		return m.Wait()
	}
	return res, err
}

func withRunDefaults(o RunOptions) RunOptions {
	o = withMachineDefaults(o)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// withMachineDefaults fills in the size of the VM; Start has no default
// timeout: a long-lived VM lives as long as its context.
func withMachineDefaults(o RunOptions) RunOptions {
	if o.MemoryMB <= 0 {
		o.MemoryMB = DefaultMemoryMB
	}
	if o.CPUs <= 0 {
		o.CPUs = DefaultCPUs
	}
	return o
}

// qemuArgs is the QEMU command line: TCG (the lab machines' /dev/kvm cannot
// run a stock kernel), the image's disk with snapshot=on so the cache is
// never written, the share over 9p, and no network card unless ports are
// forwarded.
func qemuArgs(img *Image, o RunOptions, socat string) []string {
	// mitigations=off: TCG's CPU has no PCID, so page-table isolation would
	// flush QEMU's software TLB on every system call (twice as slow).
	// net.ifnames=0 keeps the card eth0 when udev runs.
	cmdline := []string{"console=ttyS0", "quiet", "root=/dev/vda", "rw", "panic=-1", "mitigations=off", "net.ifnames=0"}
	if !o.Udev {
		cmdline = append(cmdline, "lab.noudev")
	}
	nic := "none"
	if len(o.Forward) > 0 || len(o.GuestForward) > 0 {
		cmdline = append(cmdline, "lab.net")
		nic = "user,model=virtio-net-pci,restrict=on"
		for _, f := range o.Forward {
			addr := f.HostAddr
			if addr == "" {
				addr = "127.0.0.1"
			}
			nic += fmt.Sprintf(",hostfwd=tcp:%s:%d-:%d", addr, f.HostPort, f.GuestPort)
		}
		for _, f := range o.GuestForward {
			// cmd: is split into words by QEMU (shell-like, no shell runs).
			nic += "," + qemuEscape(fmt.Sprintf("guestfwd=tcp:%s:%d-cmd:%s STDIO TCP:127.0.0.1:%d", f.GuestAddr, f.GuestPort, socat, f.HostPort))
		}
	}
	var disks []string
	for _, d := range o.Disks {
		disks = append(disks, "-drive", "file="+qemuEscape(d)+",if=virtio,format=raw,snapshot=on")
	}
	return append([]string{
		// No AVX/AVX2: QEMU 7.2 was the first release whose TCG emulates
		// them, and guest processes that glibc sends down its AVX2 string
		// and memory paths (umount, rpc.mountd) died of SIGSEGV now and then
		// under it, which no real CPU would do. The SSE4.2 paths have been
		// emulated for years; a string-heavy guest workload took 32–41 s
		// with them against 36–48 s with AVX2 (alternating runs, 26 Nov).
		"-accel", "tcg,thread=multi", "-cpu", "max,-avx,-avx2",
		"-m", strconv.Itoa(o.MemoryMB), "-smp", strconv.Itoa(o.CPUs),
		"-nographic", "-no-reboot",
		"-kernel", img.Kernel, "-initrd", img.Initrd,
		"-append", strings.Join(cmdline, " "),
		"-drive", "file=" + qemuEscape(img.Disk) + ",if=virtio,format=raw,snapshot=on",
		"-virtfs", "local,path=" + qemuEscape(o.Share) + ",mount_tag=lab,security_model=none,id=lab",
		"-nic", nic,
	}, disks...)
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
