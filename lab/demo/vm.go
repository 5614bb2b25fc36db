package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

// VMOptions configure RunInVM.
type VMOptions struct {
	// StaticDir holds switchyard and switchyard-lab built with
	// CGO_ENABLED=0 (the VM has no Go toolchain and its own libc).
	StaticDir string
	Out       io.Writer
}

// RunInVM boots the storage VM and runs the demo there with --kernel: the
// same walkthrough, then a real NFS mount and a real NVMe/TCP connect of
// an Infinia volume. The VM's console (the demo's output) streams to Out.
func RunInVM(ctx context.Context, o VMOptions) error {
	if ok, why := vm.Available(); !ok {
		return fmt.Errorf("the storage VM cannot run here: %s", why)
	}
	start := time.Now()
	img, err := vm.EnsureImage(ctx, vm.ImageOptions{Log: o.Out})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "storage VM image ready (%.1f s); booting it (QEMU, TCG) to run the demo inside…\n", time.Since(start).Seconds())
	share, err := os.MkdirTemp("", "switchyard-demo-vm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(share)
	for _, b := range []string{"switchyard", "switchyard-lab"} {
		data, err := os.ReadFile(filepath.Join(o.StaticDir, b))
		if err != nil {
			return fmt.Errorf("static binary: %w (build with CGO_ENABLED=0 go build -o %s/ ./cmd/...)", err, o.StaticDir)
		}
		if err := os.WriteFile(filepath.Join(share, b), data, 0o755); err != nil {
			return err
		}
	}
	script := "#!/bin/sh\nexec /lab/switchyard-lab demo --kernel --switchyard /lab/switchyard\n"
	if err := os.WriteFile(filepath.Join(share, "run.sh"), []byte(script), 0o755); err != nil {
		return err
	}
	res, err := img.Run(ctx, vm.RunOptions{Share: share, Udev: true, MemoryMB: 2048, Timeout: 15 * time.Minute, Console: consoleFilter{o.Out}})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "storage VM: boot %.1f s, whole run %.1f s\n", res.BootSeconds, res.Wall.Seconds())
	if res.ExitCode != 0 {
		return fmt.Errorf("the demo in the VM exited %d", res.ExitCode)
	}
	return nil
}

// consoleFilter passes the console through without carriage returns.
type consoleFilter struct{ w io.Writer }

func (c consoleFilter) Write(p []byte) (int, error) {
	_, err := io.WriteString(c.w, strings.ReplaceAll(string(p), "\r", ""))
	return len(p), err
}
