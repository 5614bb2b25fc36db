package transfer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// src sends size bytes of a deterministic pattern in 64 KiB writes; a
// resume token "off=N" starts at N. dropAt > 0 makes the first attempt
// fail with UNAVAILABLE after that many bytes (a dropped SSH session).
type src struct {
	size, dropAt int64
	mu           sync.Mutex
	sends        int
}

func pattern(off int64, p []byte) {
	for i := range p {
		p[i] = byte((off + int64(i)) * 7 % 251)
	}
}

func (s *src) Send(ctx context.Context, w io.Writer, resume string) error {
	s.mu.Lock()
	s.sends++
	first := s.sends == 1
	s.mu.Unlock()
	off := int64(0)
	if resume != "" {
		n, err := strconv.ParseInt(strings.TrimPrefix(resume, "off="), 10, 64)
		if err != nil {
			return fmt.Errorf("bad token %q", resume)
		}
		off = n
	}
	buf := make([]byte, 64<<10)
	for off < s.size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), s.size-off)
		if first && s.dropAt > 0 && off+n > s.dropAt {
			return status.Error(codes.Unavailable, "connection lost during command")
		}
		pattern(off, buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// sink hashes what it receives and keeps how far it got, like a
// resumable zfs receive.
type sink struct {
	resumable bool
	fullAt    int64 // > 0: fail with "out of space" at this many bytes
	mu        sync.Mutex
	got       int64
	sum       hash.Hash
	aborted   int
	partial   bool
}

func (k *sink) Receive(ctx context.Context, r io.Reader) error {
	k.mu.Lock()
	if k.sum == nil {
		k.sum = sha256.New()
	}
	k.partial = true
	k.mu.Unlock()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		k.mu.Lock()
		if k.fullAt > 0 && k.got+int64(n) > k.fullAt {
			k.mu.Unlock()
			return status.Error(codes.ResourceExhausted, "cannot receive: out of space")
		}
		k.sum.Write(buf[:n])
		k.got += int64(n)
		k.mu.Unlock()
		if err == io.EOF {
			k.mu.Lock()
			k.partial = false
			k.mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (k *sink) ResumeToken(context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.resumable || !k.partial || k.got == 0 {
		return "", nil
	}
	return fmt.Sprintf("off=%d", k.got), nil
}

func (k *sink) Abort(context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.aborted++
	k.got, k.sum, k.partial = 0, nil, false
	return nil
}

func want(size int64) []byte {
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for off := int64(0); off < size; {
		n := min(int64(len(buf)), size-off)
		pattern(off, buf[:n])
		h.Write(buf[:n])
		off += n
	}
	return h.Sum(nil)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestCopyBoundedMemory(t *testing.T) {
	const size = 64 << 20
	s, k := &src{size: size}, &sink{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var progress int64
	c := &Counter{}
	err := Copy(context.Background(), s, k, Options{Log: quiet, Total: size, Progress: func(b int64) { progress = b }}, c)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if string(k.sum.Sum(nil)) != string(want(size)) || k.got != size {
		t.Fatalf("received %d bytes with the wrong content", k.got)
	}
	if progress != size || c.Percent() != 100 {
		t.Fatalf("progress hook saw %d bytes, %d%%; want %d, 100%%", progress, c.Percent(), size)
	}
	// The stream never sits in the controller: allocations stay a small
	// fraction of what was copied.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/8 {
		t.Fatalf("copying %d MiB allocated %d bytes; the stream must not be buffered", size>>20, alloc)
	}
}

func TestCopyResumesAfterDrop(t *testing.T) {
	const size = 4 << 20
	s, k := &src{size: size, dropAt: 1 << 20}, &sink{resumable: true}
	if err := Copy(context.Background(), s, k, Options{Log: quiet}, nil); err != nil {
		t.Fatal(err)
	}
	if s.sends != 2 || k.aborted != 0 {
		t.Fatalf("%d sends, %d aborts; want a resumed second send and no abort", s.sends, k.aborted)
	}
	if string(k.sum.Sum(nil)) != string(want(size)) {
		t.Fatal("resumed stream is not the original")
	}
}

func TestCopyStartsOverWithoutToken(t *testing.T) {
	const size = 2 << 20
	s, k := &src{size: size, dropAt: 1 << 20}, &sink{}
	if err := Copy(context.Background(), s, k, Options{Log: quiet}, nil); err != nil {
		t.Fatal(err)
	}
	if s.sends != 2 || k.aborted != 1 || string(k.sum.Sum(nil)) != string(want(size)) {
		t.Fatalf("%d sends, %d aborts; want a clean restart", s.sends, k.aborted)
	}
}

func TestCopyTargetFullRemovesPartial(t *testing.T) {
	s, k := &src{size: 4 << 20}, &sink{fullAt: 1 << 20}
	err := Copy(context.Background(), s, k, Options{Log: quiet}, nil)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "out of space") {
		t.Fatalf("got %v; want RESOURCE_EXHAUSTED out of space", err)
	}
	if k.aborted != 1 || k.got != 0 {
		t.Fatalf("aborted %d times, %d bytes left; want the partial target removed", k.aborted, k.got)
	}
}

func TestCopyGivesUp(t *testing.T) {
	k := &sink{}
	err := Copy(context.Background(), &alwaysDrop{}, k, Options{Log: quiet, Attempts: 2}, nil)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Fatalf("got %v", err)
	}
	if k.aborted == 0 || k.got != 0 {
		t.Fatal("partial target not removed")
	}
}

type alwaysDrop struct{}

func (alwaysDrop) Send(_ context.Context, w io.Writer, _ string) error {
	_, _ = w.Write([]byte("partial"))
	return status.Error(codes.Unavailable, "connection lost")
}

func TestCopyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	k := &sink{}
	s := &src{size: 1 << 30}
	go func() {
		for {
			k.mu.Lock()
			got := k.got
			k.mu.Unlock()
			if got > 1<<20 {
				cancel()
				return
			}
			runtime.Gosched()
		}
	}()
	err := Copy(ctx, s, k, Options{Log: quiet}, nil)
	if err == nil || k.aborted != 1 || k.got != 0 {
		t.Fatalf("err %v, aborted %d, %d bytes left; want the partial target removed", err, k.aborted, k.got)
	}
}

type doneSink struct{ sink }

func (*doneSink) Complete() bool { return true }

func TestCopySkipsCompleteTarget(t *testing.T) {
	s := &src{size: 1 << 20}
	k := &doneSink{}
	if err := Copy(context.Background(), s, k, Options{Log: quiet}, nil); err != nil {
		t.Fatal(err)
	}
	if s.sends != 0 || k.got != 0 {
		t.Fatalf("%d sends, %d bytes received into a complete target", s.sends, k.got)
	}
}

// A target an earlier process left half-received (a controller restart
// mid-copy) is resumed from its token, not started over.
func TestCopyResumesTargetLeftByEarlierProcess(t *testing.T) {
	const size = 2 << 20
	k := &sink{resumable: true}
	// The earlier process: a first attempt that dropped after 1 MiB, and
	// no retry (it was killed).
	_ = once(context.Background(), &src{size: size, dropAt: 1 << 20}, k, "", &Counter{}, Options{Log: quiet})
	if k.got == 0 || !k.partial {
		t.Fatal("setup: no partial target")
	}
	s := &src{size: size, sends: 1} // its first send is not a dropping one
	if err := Copy(context.Background(), s, k, Options{Log: quiet}, nil); err != nil {
		t.Fatal(err)
	}
	if s.sends != 2 || k.aborted != 0 || string(k.sum.Sum(nil)) != string(want(size)) {
		t.Fatalf("%d sends, %d aborts; want one resumed send onto the partial target", s.sends, k.aborted)
	}
}

// A source that disappears mid-copy (NOT_FOUND from zfs send) is not
// retried, and the partial target is removed.
func TestCopySourceGone(t *testing.T) {
	k := &sink{resumable: true}
	err := Copy(context.Background(), &goneSource{}, k, Options{Log: quiet}, nil)
	if status.Code(err) != codes.NotFound || k.aborted != 1 || k.got != 0 {
		t.Fatalf("err %v, aborted %d, %d bytes left", err, k.aborted, k.got)
	}
}

type goneSource struct{}

func (goneSource) Send(_ context.Context, w io.Writer, _ string) error {
	_, _ = w.Write(make([]byte, 1<<16))
	return status.Error(codes.NotFound, "zfs send: dataset does not exist")
}
