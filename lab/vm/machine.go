package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StopFile is the file in the share whose appearance asks a long-lived
// run.sh to finish (Machine.Stop): the guest's init powers off cleanly when
// run.sh returns. The share is 9p without caching, so the guest sees the
// file as soon as the host writes it.
const StopFile = "stop"

// Machine is a VM that Start booted. Its run.sh may run for as long as the
// caller needs (a Kubernetes node): Stop ends it, Wait waits for it.
type Machine struct {
	o      RunOptions
	cmd    *exec.Cmd
	start  time.Time
	tail   *tailBuffer
	stderr *tailBuffer
	done   chan struct{} // closed when QEMU has exited and res/err are set
	res    *Result
	err    error

	mu       sync.Mutex
	boot     time.Duration
	events   []string      // the "LAB: " lines so far, without the prefix
	changed  chan struct{} // closed and replaced at each event
	stopping bool          // Stop gave up waiting and killed QEMU
	crash    os.Signal     // the signal QEMU died of by itself, if any
}

// Start boots img and returns while the VM runs its share's run.sh. QEMU is
// killed when ctx ends or, if o.Timeout is set, when it passes: ctx must
// live as long as the VM should. A Machine must end with Stop or Wait.
func (img *Image) Start(ctx context.Context, o RunOptions) (*Machine, error) {
	o = withMachineDefaults(o)
	if o.Share == "" {
		return nil, errors.New("vm: RunOptions.Share is required (the directory holding run.sh)")
	}
	share, err := filepath.Abs(o.Share)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(share); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("vm: share %s is not a directory", o.Share)
	}
	o.Share = share
	for _, f := range []string{"rc", "run.log", StopFile} {
		if err := os.Remove(filepath.Join(share, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("vm: clearing the share: %w", err)
		}
	}
	argv, err := img.Command(o)
	if err != nil {
		return nil, err
	}
	m := &Machine{
		o: o, tail: &tailBuffer{max: consoleTail}, stderr: &tailBuffer{max: 8192},
		done: make(chan struct{}), changed: make(chan struct{}),
	}
	outs := []io.Writer{m.tail, &lineWatcher{onLine: m.onLine}}
	if o.Console != nil {
		outs = append(outs, o.Console)
	}
	m.cmd = exec.Command(argv[0], argv[1:]...)
	m.cmd.Stdout = io.MultiWriter(outs...)
	m.cmd.Stderr = m.stderr
	m.cmd.Stdin = o.Stdin
	// Its own process group: killing QEMU must not depend on its children
	// (the guest forwards' socat processes are among them).
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	m.start = time.Now()
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("vm: starting qemu: %w", err)
	}
	go m.supervise(ctx)
	return m, nil
}

// Command is the QEMU command line (the program first) that boots img
// with o, for callers that run QEMU themselves (a node VM that outlives
// the program starting it). It checks that qemu, and socat for guest
// forwards, are installed.
func (img *Image) Command(o RunOptions) ([]string, error) {
	o = withMachineDefaults(o)
	if o.Share == "" {
		return nil, errors.New("vm: RunOptions.Share is required (the directory holding run.sh)")
	}
	share, err := filepath.Abs(o.Share)
	if err != nil {
		return nil, err
	}
	o.Share = share
	qemu, err := LookTool("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	socat := ""
	if len(o.GuestForward) > 0 {
		if socat, err = LookTool("socat"); err != nil {
			return nil, fmt.Errorf("vm: guest forwards need socat on the host (package socat): %w", err)
		}
	}
	return append([]string{qemu}, qemuArgs(img, o, socat)...), nil
}

// onLine records the init's "LAB: <event>" lines.
func (m *Machine) onLine(line string) {
	_, ev, ok := strings.Cut(line, "LAB: ")
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.boot == 0 && strings.HasPrefix(ev, "base-ready") {
		m.boot = time.Since(m.start)
	}
	m.events = append(m.events, ev)
	close(m.changed)
	m.changed = make(chan struct{})
}

// supervise waits for QEMU, killing it when ctx ends or the timeout
// passes, and sets the result.
func (m *Machine) supervise(ctx context.Context) {
	exited := make(chan error, 1)
	go func() { exited <- m.cmd.Wait() }()
	var timeout <-chan time.Time
	if m.o.Timeout > 0 {
		timer := time.NewTimer(m.o.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	var killed error
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		killed = fmt.Errorf("vm: qemu killed after %s: %w", time.Since(m.start).Round(time.Second), ctx.Err())
	case <-timeout:
		killed = fmt.Errorf("vm: qemu killed: the boot took longer than its timeout of %s", m.o.Timeout)
	}
	if killed != nil {
		m.kill()
		waitErr = <-exited
	}
	m.finish(killed, waitErr)
	close(m.done)
}

func (m *Machine) kill() { _ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL) }

// finish sets the result after QEMU exited.
func (m *Machine) finish(killed, waitErr error) {
	res := &Result{ExitCode: -1, Wall: time.Since(m.start), Console: string(m.tail.Bytes())}
	m.mu.Lock()
	res.BootSeconds = m.boot.Seconds()
	stopping := m.stopping
	var ee *exec.ExitError
	if killed == nil && !stopping && errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			m.crash = ws.Signal()
		}
	}
	m.mu.Unlock()
	m.res = res
	switch {
	case stopping:
		m.err = fmt.Errorf("vm: the VM did not power off after %s was written; qemu killed; console ends with:\n%s",
			StopFile, lastLines(res.Console, 15))
		return
	case killed != nil:
		m.err = fmt.Errorf("%w; console ends with:\n%s", killed, lastLines(res.Console, 15))
		return
	case waitErr != nil:
		m.err = fmt.Errorf("vm: qemu: %v: %s; console ends with:\n%s", waitErr,
			strings.TrimSpace(string(m.stderr.Bytes())), lastLines(res.Console, 15))
		return
	}
	rcPath := filepath.Join(m.o.Share, "rc")
	b, err := os.ReadFile(rcPath)
	if err != nil {
		if m.o.Stdin == nil {
			m.err = fmt.Errorf("vm: the VM powered off but run.sh did not finish (no %s); console ends with:\n%s",
				rcPath, lastLines(res.Console, 15))
		}
		return // an interactive boot need not run anything
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		m.err = fmt.Errorf("vm: %s holds %q, not an exit code", rcPath, b)
		return
	}
	res.ExitCode = code
}

// crashedInBoot returns the signal QEMU died of when it crashed by itself
// (SIGSEGV, SIGABRT, SIGBUS, SIGILL) before the guest's init reported
// base-ready; nil otherwise.
func (m *Machine) crashedInBoot() os.Signal {
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.crash {
	case syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGBUS, syscall.SIGILL:
		if m.boot == 0 {
			return m.crash
		}
	}
	return nil
}

// Wait waits for the VM to power off and returns how run.sh ended. The
// Result comes with every error that happens after QEMU started.
func (m *Machine) Wait() (*Result, error) {
	<-m.done
	return m.res, m.err
}

// Done is closed when QEMU has exited.
func (m *Machine) Done() <-chan struct{} { return m.done }

// Console is the end of the serial console so far, for diagnostics.
func (m *Machine) Console() string { return string(m.tail.Bytes()) }

// Share is the host directory the guest sees at /lab.
func (m *Machine) Share() string { return m.o.Share }

// Stop asks run.sh to finish by writing StopFile into the share and waits
// for the VM to power off; when ctx ends first, QEMU is killed and the
// error says so. run.sh must watch for /lab/stop to stop cleanly.
func (m *Machine) Stop(ctx context.Context) (*Result, error) {
	select {
	case <-m.done:
		return m.Wait()
	default:
	}
	if err := os.WriteFile(filepath.Join(m.o.Share, StopFile), nil, 0o644); err != nil {
		m.mu.Lock()
		m.stopping = true
		m.mu.Unlock()
		m.kill()
		res, _ := m.Wait()
		return res, fmt.Errorf("vm: asking the VM to stop: %w; qemu killed", err)
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		m.mu.Lock()
		m.stopping = true
		m.mu.Unlock()
		m.kill()
	}
	return m.Wait()
}

// WaitEvent waits until the init or run.sh prints a console line
// "LAB: <prefix>..." and returns the event after "LAB: ". It fails when
// the VM powers off first, or when ctx ends, with the console's tail.
func (m *Machine) WaitEvent(ctx context.Context, prefix string) (string, error) {
	seen := 0
	for {
		m.mu.Lock()
		events, changed := m.events, m.changed
		m.mu.Unlock()
		for ; seen < len(events); seen++ {
			if strings.HasPrefix(events[seen], prefix) {
				return events[seen], nil
			}
		}
		select {
		case <-changed:
		case <-m.done:
			// The last lines may have arrived with the exit.
			m.mu.Lock()
			events = m.events
			m.mu.Unlock()
			for ; seen < len(events); seen++ {
				if strings.HasPrefix(events[seen], prefix) {
					return events[seen], nil
				}
			}
			return "", fmt.Errorf("vm: the VM powered off before \"LAB: %s\"; console ends with:\n%s",
				prefix, lastLines(m.Console(), 30))
		case <-ctx.Done():
			return "", fmt.Errorf("vm: no \"LAB: %s\" after %s: %w; console ends with:\n%s", prefix,
				time.Since(m.start).Round(time.Second), ctx.Err(), lastLines(m.Console(), 30))
		}
	}
}
