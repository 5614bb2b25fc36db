package containers

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Spec is one simulator to run.
type Spec struct {
	// Command is the switchyard-lab subcommand: truenas, infinia, zfs-ssh.
	Command string
	// Args are its flags; --state /state is added.
	Args []string
	// Addr is the 127.0.0.1 address it listens on (in Args too), dialled
	// until it answers.
	Addr string
	// Ready is a line of its output printed once it serves.
	Ready string
	// StateDir is the host directory mounted at /state.
	StateDir string
	// HostConfig, when set, changes the container's host configuration
	// further (the target containers add capabilities and devices).
	HostConfig func(*container.HostConfig)
	// Image overrides the image (default: the ref passed to Start), and
	// Entrypoint its entry point (an image whose own is not switchyard-lab).
	Image      string
	Entrypoint []string
}

// Sim is a running simulator container.
type Sim struct {
	testcontainers.Container
	Addr string

	mu         sync.Mutex
	terminated bool
}

// Terminate stops and removes the container; a second call (a test that
// restarted its simulator, then its cleanup) does nothing.
func (s *Sim) Terminate(ctx context.Context, opts ...testcontainers.TerminateOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terminated {
		return nil
	}
	s.terminated = true
	return s.Container.Terminate(ctx, opts...)
}

// Start runs spec from image ref on the host's network and waits until it
// prints spec.Ready and accepts connections on spec.Addr. The caller
// terminates it (Sim.Terminate), normally in a test cleanup.
func Start(ctx context.Context, ref string, spec Spec) (*Sim, error) {
	// No Ryuk (an image from a registry); the Docker host is this machine
	// (testcontainers takes /.dockerenv as a sign it runs in a container).
	for k, v := range map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "true", "TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1"} {
		if os.Getenv(k) == "" {
			if err := os.Setenv(k, v); err != nil {
				return nil, err
			}
		}
	}
	img := ref
	if spec.Image != "" {
		img = spec.Image
	}
	req := testcontainers.ContainerRequest{
		Image:      img,
		Entrypoint: spec.Entrypoint,
		Cmd:        append([]string{spec.Command, "--state", "/state"}, spec.Args...),
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			init := true
			hc.Init = &init // docker-init forwards SIGTERM: the simulator saves and exits at once
			hc.Binds = append(hc.Binds, spec.StateDir+":/state")
			if spec.HostConfig != nil {
				spec.HostConfig(hc)
			}
		},
		WaitingFor: wait.ForLog(spec.Ready).WithStartupTimeout(60 * time.Second),
	}
	// The lab's dockerd runs with --bridge=none: it has no "bridge"
	// network, and testcontainers would otherwise create a bridge network
	// of its own (reaper_default) and attach every container to it. Naming
	// "host" the default network keeps the containers on the host's only.
	p, err := testcontainers.NewDockerProvider(testcontainers.WithDefaultBridgeNetwork("host"))
	if err != nil {
		return nil, fmt.Errorf("connecting to Docker: %w", err)
	}
	defer func() { _ = p.Close() }()
	c, err := p.CreateContainer(ctx, req)
	if err == nil {
		err = c.Start(ctx)
	}
	if err != nil {
		if c != nil {
			_ = c.Terminate(context.WithoutCancel(ctx))
		}
		return nil, fmt.Errorf("starting %s %s from %s: %w", spec.Command, strings.Join(spec.Args, " "), img, err)
	}
	s := &Sim{Container: c, Addr: spec.Addr}
	if err := dialUntil(ctx, spec.Addr, 30*time.Second); err != nil {
		logs := s.Logs(ctx)
		_ = c.Terminate(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%s printed %q but %s does not accept connections: %w\n%s", spec.Command, spec.Ready, spec.Addr, err, logs)
	}
	return s, nil
}

// Logs returns the container's output so far (for a failure message).
func (s *Sim) Logs(ctx context.Context) string {
	rc, err := s.Container.Logs(ctx)
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer func() { _ = rc.Close() }()
	var b strings.Builder
	buf := make([]byte, 4096)
	for b.Len() < 64<<10 {
		n, err := rc.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func dialUntil(ctx context.Context, addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
