package zfshost

import (
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// RTTLatency is charged once per SSH exec, whatever the command line runs;
// Latency once per command. A program of three commands on a host with a
// 150 ms round trip and no per-command latency takes one round trip.
func TestRTTLatencyPerExec(t *testing.T) {
	const rtt = 150 * time.Millisecond
	h, err := Start(Options{Dir: t.TempDir(), RTTLatency: rtt})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, err := ssh.Dial("tcp", h.Addr, &ssh.ClientConfig{User: h.User, Auth: []ssh.AuthMethod{ssh.Password(h.Password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := func() time.Duration {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		start := time.Now()
		if out, err := s.CombinedOutput("true; true; zfs list -H -o name tank"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	var best time.Duration
	for i := range 3 {
		if d := run(); i == 0 || d < best {
			best = d
		}
	}
	// At least the one round trip; well short of three (a loaded machine
	// only stretches the time, so the best of three is taken).
	if best < rtt || best >= 3*rtt {
		t.Fatalf("a program of three commands took %v, want one round trip of %v", best, rtt)
	}
}
