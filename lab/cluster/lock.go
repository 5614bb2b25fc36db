package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// One local cluster per machine: its ports, the kubepods cgroups, the
// /var/lib/kubelet paths and the network devices are machine-wide. A flock
// serialises starts and stops; the owner file names the state dir of the
// running cluster, so that a second start says which cluster to stop.
var runDir = "/run/switchyard-lab"

func ownerFile() string { return filepath.Join(runDir, "cluster.owner") }

// acquireMachineLock takes the machine-wide start/stop lock.
func acquireMachineLock() (release func(), err error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(runDir, "cluster.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another switchyard-lab cluster is starting or stopping (lock %s held for 5 minutes)", f.Name())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// claimMachine takes the machine for c and returns with the start lock
// held (release it when started). A cluster recorded earlier whose
// processes are gone is cleaned up first; while a live one runs, it waits
// up to wait, then fails naming it.
func (c *Local) claimMachine(ctx context.Context, wait time.Duration) (release func(), err error) {
	deadline := time.Now().Add(wait)
	for {
		release, err := acquireMachineLock()
		if err != nil {
			return nil, err
		}
		busy := c.otherCluster()
		if busy == nil {
			if err := checkPortsFree(); err != nil {
				release()
				return nil, err
			}
			if err := os.WriteFile(ownerFile(), []byte(c.dir+"\n"), 0o644); err != nil {
				release()
				return nil, err
			}
			return release, nil
		}
		// Unlocked while waiting: the other cluster's Stop needs the lock.
		release()
		if time.Now().After(deadline) {
			return nil, busy
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (gave up waiting: %v)", busy, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// otherCluster returns an error naming the cluster that runs on this
// machine, or nil when none does (cleaning up after one that died).
func (c *Local) otherCluster() error {
	other := recordedOwner()
	if other == "" {
		return nil
	}
	prev, err := Attach(other)
	if err != nil {
		// Its state dir is gone, and with it the pids; the port check
		// still catches processes that outlived it.
		c.logf("ignoring the record of the cluster in %s: %v", other, err)
		_ = os.Remove(ownerFile())
		return nil
	}
	for _, p := range prev.procs() {
		if p.running() {
			if other == c.dir {
				return fmt.Errorf("the cluster in %s is already running (pid %d, %s); stop it first: switchyard-lab cluster down --state-dir %s", other, p.pid, p.name, other)
			}
			return fmt.Errorf("another local cluster runs on this machine (state dir %s, pid %d, %s); stop it first: switchyard-lab cluster down --state-dir %s", other, p.pid, p.name, other)
		}
	}
	c.logf("cleaning up after the cluster in %s, which did not stop cleanly", other)
	_ = prev.stop()
	return nil
}

// recordedOwner is the state dir the owner file names ("" for none).
func recordedOwner() string {
	b, err := os.ReadFile(ownerFile())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// releaseMachine forgets the owner record if it is c's.
func (c *Local) releaseMachine() {
	if recordedOwner() == c.dir {
		_ = os.Remove(ownerFile())
	}
}

// checkPortsFree fails early, naming the port, when something else
// listens on one of the cluster's ports.
func checkPortsFree() error {
	for _, p := range []int{APIServerPort, EtcdClientPort, EtcdPeerPort, HostKubeletHealthz, ControllerManagerPort, SchedulerPort} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			return fmt.Errorf("port 127.0.0.1:%d, which the local cluster uses, is taken: %w", p, err)
		}
		l.Close()
	}
	return nil
}
