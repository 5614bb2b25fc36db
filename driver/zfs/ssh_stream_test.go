package zfs

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// streamExecutor is what the engine needs (engine.StreamExecutor).
type streamExecutor interface {
	RunStream(ctx context.Context, line string, stdin io.Reader, stdout io.Writer) (Output, error)
}

// patternReader yields n bytes of a counter pattern without holding them.
type patternReader struct{ off, n int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(b)), p.n-p.off))
	for i := range b[:k] {
		b[i] = byte((p.off + int64(i)) * 7)
	}
	p.off += int64(k)
	return k, nil
}

func patternSum(n int64) [32]byte {
	h := sha256.New()
	_, _ = io.Copy(h, &patternReader{n: n})
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// peakHeap samples the heap while f runs and returns its growth.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load()
}

// A stream much larger than any buffer goes through a remote cat intact,
// and the controller's heap stays far below its size.
func testStreamRoundTrip(t *testing.T, ex streamExecutor) {
	const size = 64 << 20
	h := sha256.New()
	var out Output
	var err error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // slow under -race
	defer cancel()
	grew := peakHeap(func() {
		out, err = ex.RunStream(ctx, "cat", &patternReader{n: size}, h)
	})
	if err != nil || out.Code != 0 {
		t.Fatalf("RunStream(cat) = %+v, %v", out, err)
	}
	var got [32]byte
	h.Sum(got[:0])
	if got != patternSum(size) {
		t.Fatalf("the %d bytes came back altered", size)
	}
	if grew > 16<<20 {
		t.Errorf("heap grew by %d MiB while streaming %d MiB; want bounded memory", grew>>20, size>>20)
	}
	t.Logf("streamed %d MiB; heap grew by at most %.1f MiB", size>>20, float64(grew)/(1<<20))
}

// Exit codes come back; stderr is kept up to its bound.
func testStreamStderr(t *testing.T, ex streamExecutor) {
	out, err := ex.RunStream(testContext(t), "echo oops >&2; head -c 200000 /dev/zero | tr '\\0' x >&2; exit 3", nil, nil)
	if err != nil || out.Code != 3 {
		t.Fatalf("RunStream = code %d, %v; want code 3", out.Code, err)
	}
	if !strings.HasPrefix(out.Stderr, "oops\n") || len(out.Stderr) > maxStreamStderr+100 || !strings.Contains(out.Stderr, "more bytes of stderr not kept") {
		t.Fatalf("stderr of %d bytes starting %.20q; want the first %d bytes and a note", len(out.Stderr), out.Stderr, maxStreamStderr)
	}
}

type failingWriter struct{ left int }

var errSinkGone = errors.New("sink gone")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.left <= 0 {
		return 0, errSinkGone
	}
	w.left -= len(p)
	return len(p), nil
}

// A writer that fails ends an endless command, and says why.
func testStreamWriteFails(t *testing.T, ex streamExecutor) {
	start := time.Now()
	_, err := ex.RunStream(testContext(t), "cat /dev/zero", nil, &failingWriter{left: 1 << 20})
	if err == nil {
		t.Fatal("RunStream succeeded with a failing writer")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("returned after %s", d)
	}
}

func TestSSHRunStream(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	t.Run("round trip", func(t *testing.T) { testStreamRoundTrip(t, s) })
	t.Run("stderr", func(t *testing.T) { testStreamStderr(t, s) })
	t.Run("write fails", func(t *testing.T) {
		testStreamWriteFails(t, s)
		eventually(t, "the session slot to be freed", func() bool { return s.Stats().InUse == 0 })
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		pr, pw := io.Pipe() // input that never ends
		defer pw.Close()
		out, err := s.RunStream(ctx, "cat", pr, io.Discard)
		if !errors.Is(err, context.DeadlineExceeded) || out.Code != -1 {
			t.Fatalf("RunStream = %+v, %v; want DeadlineExceeded", out, err)
		}
		eventually(t, "the session slot to be freed", func() bool { return s.Stats().InUse == 0 })
	})
	t.Run("session limit", func(t *testing.T) {
		s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.MaxSessions = 1 })
		pr, pw := io.Pipe()
		held := make(chan error, 1)
		go func() {
			_, err := s.RunStream(testContext(t), "cat", pr, io.Discard)
			held <- err
		}()
		eventually(t, "the stream to hold the slot", func() bool { return s.Stats().InUse == 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := s.Run(ctx, "true", RunOptions{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a command ran beside a stream on a 1-session connection: %v", err)
		}
		pw.Close()
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	})
}

func TestSharedSSHRunStream(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	host, port := hostPort(t, srv.Addr)
	e, err := SharedSSH(SSHConfig{Host: host, Port: port, Username: srv.User, Password: srv.Password, DialTimeout: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var out strings.Builder
	if res, err := e.RunStream(testContext(t), "cat", strings.NewReader("through the shared connection"), &out); err != nil || res.Code != 0 {
		t.Fatalf("RunStream = %+v, %v", res, err)
	}
	if out.String() != "through the shared connection" {
		t.Fatalf("got %q", out.String())
	}
}

func TestLocalRunStream(t *testing.T) {
	l := NewLocal("", nil)
	t.Run("round trip", func(t *testing.T) { testStreamRoundTrip(t, l) })
	t.Run("stderr", func(t *testing.T) { testStreamStderr(t, l) })
	t.Run("write fails", func(t *testing.T) { testStreamWriteFails(t, l) })
}
