package bench

import (
	"bufio"
	"io"
	"net"
	"os"
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
//
// With SWITCHYARD_BENCH_RTT (a duration, e.g. 5ms) the client reaches the
// host through a relay that delays every byte by half of it each way (a
// network with that round trip, which the simulator's per-exec latency
// model charges once per exec whatever the protocol does), and the
// benchmark reports wall-ms/program and round-trips/program (wall ÷ RTT):
// the protocol's own round trips, measured rather than modelled.
func BenchmarkSSHExecVsSession(b *testing.B) {
	h, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(b.TempDir(), "host")})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	addr := h.Addr
	var rtt time.Duration
	if v := os.Getenv("SWITCHYARD_BENCH_RTT"); v != "" {
		if rtt, err = time.ParseDuration(v); err != nil {
			b.Fatalf("SWITCHYARD_BENCH_RTT: %v", err)
		}
		addr = delayRelay(b, h.Addr, rtt/2)
	}
	perProgram := func(b *testing.B, start time.Time) {
		if rtt > 0 {
			wall := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(float64(wall.Microseconds())/1000, "wall-ms/program")
			b.ReportMetric(float64(wall)/float64(rtt), "round-trips/program")
		}
	}
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: h.User, Auth: []ssh.AuthMethod{ssh.Password(h.Password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const program = "zfs get -Hp -o name,property,value,source type tank; zfs list -H -o name tank"
	b.Run("exec", func(b *testing.B) {
		cpu0, start := selfCPU(b), time.Now()
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
		perProgram(b, start)
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
		cpu0, start := selfCPU(b), time.Now()
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
		perProgram(b, start)
		b.ReportMetric(float64(selfCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-us/program")
	})
}

// delayRelay listens on a local port and forwards every connection to
// target, each chunk delayed by oneWay in both directions (order kept):
// a network whose round trip is 2 × oneWay. It stops with the benchmark.
func delayRelay(b *testing.B, target string, oneWay time.Duration) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			go delayCopy(out, in, oneWay)
			go delayCopy(in, out, oneWay)
		}
	}()
	return l.Addr().String()
}

// delayCopy copies src to dst, writing each chunk oneWay after it was
// read; it closes both ends when either fails.
func delayCopy(dst, src net.Conn, oneWay time.Duration) {
	type chunk struct {
		due time.Time
		b   []byte
	}
	q := make(chan chunk, 1024)
	go func() {
		defer dst.Close()
		for c := range q {
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.b); err != nil {
				src.Close()
				return
			}
		}
	}()
	defer close(q)
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{due: time.Now().Add(oneWay), b: buf[:n]}
		}
		if err != nil {
			return
		}
	}
}
