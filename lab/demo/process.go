package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// plugin is a switchyard process started by the demo.
type plugin struct {
	cmd  *exec.Cmd
	done chan error
}

// startPlugin runs the switchyard binary with democratic-csi's flags.
func startPlugin(bin, mainFile, sock, stateDir string, logTo io.Writer) (*plugin, error) {
	cmd := exec.Command(bin,
		"--driver-config-file="+mainFile,
		"--csi-name=org.switchyard.demo",
		"--csi-version=1.5.0",
		"--csi-mode=controller", "--csi-mode=node",
		"--server-socket="+sock,
		"--node-state-dir="+stateDir,
		"--log-level=info")
	cmd.Env = append(os.Environ(), "CSI_NODE_ID=demo-node")
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p := &plugin{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// stop sends SIGTERM (as the kubelet does) and waits for a clean exit.
func (p *plugin) stop(ctx context.Context) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("switchyard exited with %v after SIGTERM", err)
		}
		return nil
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("switchyard did not stop within the deadline after SIGTERM (killed: %v)", <-p.done)
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("switchyard did not stop 30s after SIGTERM (killed: %v)", <-p.done)
	}
}
