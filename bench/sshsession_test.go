package bench

import (
	"bufio"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// BenchmarkSSHExecVsSession measures what one SSH exec per program costs
// against programs written to one long-lived shell session (a sentinel
// line after each carries its exit status), on the simulated host without
// latency: the CPU of both ends per program (this process holds client and
// server) and the SSH packets behind it. It is the evidence for
// docs/performance.md's "one shell session per session slot": an exec on a
// new channel is channel open, confirmation, exec request, reply, data,
// exit-status, EOF and close; a program on a session is its line and its
// output.
func BenchmarkSSHExecVsSession(b *testing.B) {
	h, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(b.TempDir(), "host")})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	c, err := ssh.Dial("tcp", h.Addr, &ssh.ClientConfig{User: h.User, Auth: []ssh.AuthMethod{ssh.Password(h.Password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const program = "zfs get -Hp -o name,property,value,source type tank; zfs list -H -o name tank"
	b.Run("exec", func(b *testing.B) {
		cpu0 := selfCPU(b)
		for range b.N {
			s, err := c.NewSession()
			if err != nil {
				b.Fatal(err)
			}
			if out, err := s.Output(program); err != nil || !strings.Contains(string(out), "tank") {
				b.Fatalf("%v: %s", err, out)
			}
			s.Close()
		}
		b.ReportMetric(float64(selfCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-us/program")
	})
	b.Run("session", func(b *testing.B) {
		s, err := c.NewSession()
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		in, err := s.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		outPipe, err := s.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		s.Stderr = io.Discard
		if err := s.Shell(); err != nil {
			b.Fatal(err)
		}
		out := bufio.NewReader(outPipe)
		cpu0 := selfCPU(b)
		for range b.N {
			if _, err := io.WriteString(in, program+"; echo __end__ $?\n"); err != nil {
				b.Fatal(err)
			}
			for {
				l, err := out.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				if strings.HasPrefix(l, "__end__ ") {
					break
				}
			}
		}
		b.ReportMetric(float64(selfCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-us/program")
	})
}
