package soak

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends" // every backend, as cmd/switchyard links them
	"github.com/switchyard-csi/switchyard/driver/assembly"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// plugin is the switchyard under test: in-process, or the binary as a
// subprocess that can be killed with SIGKILL and started again.
type plugin struct {
	sock string
	stop func()
	kill func() error // nil in-process

	// subprocess
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	bin  string
	main string
	dir  string
	log  io.Writer
}

// startInProcess serves the main config on a unix socket in this process.
func startInProcess(dir, mainFile string, logTo io.Writer) (*plugin, error) {
	log := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := assembly.New(assembly.Options{ConfigFile: mainFile, CSIName: "org.switchyard.soak", NodeName: nodeName,
		StateDir: filepath.Join(dir, "node-state"), Logger: log})
	if err != nil {
		return nil, err
	}
	srv := p.NewServer(log)
	sock := filepath.Join(dir, "csi.sock")
	l, err := csisrv.Listen("unix://" + sock)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.Identity.SetReady(true)
	go func() { _ = srv.Serve(l) }() // ends with Stop; its error then says only that
	return &plugin{sock: sock, stop: func() { srv.Stop(context.Background()); p.Close() }}, nil
}

// startProcess runs the switchyard binary; kill SIGKILLs it and starts it
// again on the same socket.
func startProcess(bin, dir, mainFile string, logTo io.Writer) (*plugin, error) {
	p := &plugin{sock: filepath.Join(dir, "csi.sock"), bin: bin, main: mainFile, dir: dir, log: logTo}
	if err := p.spawn(); err != nil {
		return nil, err
	}
	p.stop = func() {
		p.mu.Lock()
		cmd, done := p.cmd, p.done
		p.mu.Unlock()
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	p.kill = p.restart
	return p, nil
}

func (p *plugin) spawn() error {
	_ = os.Remove(p.sock)
	cmd := exec.Command(p.bin,
		"--driver-config-file="+p.main,
		"--csi-name=org.switchyard.soak",
		"--csi-version=1.5.0",
		"--csi-mode=controller", "--csi-mode=node",
		"--server-socket="+p.sock,
		"--node-state-dir="+filepath.Join(p.dir, "node-state"),
		"--log-level=warn")
	cmd.Env = append(os.Environ(), "CSI_NODE_ID="+nodeName)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	return nil
}

// restart kills the driver with SIGKILL (whatever calls it is running die
// with it) and starts it again.
func (p *plugin) restart() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	<-done
	return p.spawn()
}

// dial connects to the plugin and waits until it answers Probe.
func (p *plugin) dial(ctx context.Context) (*csiclient.Client, error) {
	c, err := csiclient.Dial("unix://" + p.sock)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.WaitReady(wctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
