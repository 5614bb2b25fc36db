package benchtable

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// driver is a running switchyard controller.
type driver struct {
	c    *csiclient.Client
	pid  int
	stop func()
}

// startDriver runs bin with the config main as a controller on a socket in
// dir, at the default log level (as deployed; the lines go to stderr), and
// waits until it answers Probe as ready.
func startDriver(ctx context.Context, bin, dir, main string, stderr io.Writer) (*driver, error) {
	mainFile := filepath.Join(dir, "main.yaml")
	if err := os.WriteFile(mainFile, []byte(main), 0o600); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "csi.sock")
	cmd := exec.Command(bin, "--driver-config-file="+mainFile, "--csi-name=org.switchyard.bench",
		"--csi-mode=controller", "--server-socket="+sock, "--node-state-dir="+filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), "CSI_NODE_ID=bench-node")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	d := &driver{pid: cmd.Process.Pid}
	d.stop = func() {
		if d.c != nil {
			d.c.Close()
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		d.stop()
		return nil, err
	}
	d.c = c
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ready := make(chan error, 1)
	go func() { _, err := c.WaitReady(wctx); ready <- err }()
	select {
	case err := <-ready:
		if err != nil {
			d.stop()
			return nil, fmt.Errorf("the driver did not become ready: %w", err)
		}
	case <-exited:
		d.stop()
		return nil, fmt.Errorf("the driver exited before it was ready (%v); run with --verbose to see its log", waitErr)
	}
	return d, nil
}
