package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

const vmUsage = `usage: switchyard-lab vm <command>

  build [--cache DIR]                 build the storage VM image once and cache it; print its path
  run [flags] DIR                     boot the VM with DIR shared as /lab, run DIR/run.sh as root,
                                      stream the console; exits with run.sh's exit code
      --udev                          start udev (for /dev/disk/by-* links)
      --forward HOST:GUEST            forward 127.0.0.1:HOST to the VM's port GUEST (repeatable)
      --timeout 15m --memory 2048 --cpus 2
  shell [--udev] [--share DIR]        boot the VM with an interactive root shell (Ctrl-A X quits QEMU)
  check                               say whether this machine can build and boot the VM
`

// vmCmd builds and boots the QEMU storage VM (lab/vm).
func vmCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, vmUsage)
		return 2
	}
	fs := flag.NewFlagSet("vm "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cache := fs.String("cache", vm.DefaultCacheDir(), "image cache directory (env SWITCHYARD_VM_CACHE)")
	switch args[0] {
	case "check":
		ok, reason := vm.Available()
		if !ok {
			fmt.Fprintln(stderr, "vm: not available:", reason)
			return 1
		}
		fmt.Fprintln(stdout, "vm: available")
		return 0
	case "build":
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		start := time.Now()
		img, err := vm.EnsureImage(ctx, vm.ImageOptions{CacheDir: *cache, Log: stderr})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		how := "cached"
		if img.Built {
			how = "built"
		}
		fmt.Fprintf(stdout, "%s\n%s in %s (kernel %s, %d MiB on disk)\n", img.Dir, how,
			time.Since(start).Round(10*time.Microsecond), img.KernelVersion, img.DiskUsage()>>20)
		return 0
	case "run", "shell":
		o := vm.RunOptions{Console: stdout}
		fs.BoolVar(&o.Udev, "udev", false, "start udev")
		fs.DurationVar(&o.Timeout, "timeout", vm.DefaultTimeout, "kill the VM after this long")
		fs.IntVar(&o.MemoryMB, "memory", vm.DefaultMemoryMB, "memory in MiB")
		fs.IntVar(&o.CPUs, "cpus", vm.DefaultCPUs, "virtual CPUs")
		fs.Var((*forwards)(&o.Forward), "forward", "HOST:GUEST port to forward (repeatable)")
		share := fs.String("share", "", "directory shared as /lab (shell)")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if args[0] == "run" {
			if fs.NArg() != 1 {
				fmt.Fprint(stderr, vmUsage)
				return 2
			}
			o.Share = fs.Arg(0)
			if _, err := os.Stat(o.Share + "/run.sh"); err != nil {
				fmt.Fprintf(stderr, "vm run: %v\n", err)
				return 2
			}
		} else {
			o.Share, o.Stdin = *share, os.Stdin
		}
		img, err := vm.EnsureImage(ctx, vm.ImageOptions{CacheDir: *cache, Log: stderr})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		res, err := img.Run(ctx, o)
		if res != nil && o.Stdin == nil {
			fmt.Fprintf(stderr, "vm: run.sh exit code %d, boot %.1f s, wall %s\n", res.ExitCode, res.BootSeconds, res.Wall.Round(100*time.Millisecond))
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		if res.ExitCode > 0 && res.ExitCode < 256 {
			return res.ExitCode
		}
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, vmUsage)
		return 0
	}
	fmt.Fprintf(stderr, "vm: unknown command %q\n%s", args[0], vmUsage)
	return 2
}

// forwards is the repeatable --forward HOST:GUEST flag.
type forwards []vm.PortForward

func (f *forwards) String() string {
	var s []string
	for _, p := range *f {
		s = append(s, fmt.Sprintf("%d:%d", p.HostPort, p.GuestPort))
	}
	return strings.Join(s, ",")
}

func (f *forwards) Set(v string) error {
	h, g, ok := strings.Cut(v, ":")
	hp, err1 := strconv.Atoi(h)
	gp, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || hp < 1 || hp > 65535 || gp < 1 || gp > 65535 {
		return fmt.Errorf("%q is not HOST:GUEST with two port numbers", v)
	}
	*f = append(*f, vm.PortForward{HostPort: hp, GuestPort: gp})
	return nil
}
