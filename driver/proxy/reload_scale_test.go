package proxy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 16's scale goal: with 1,000 connection files, a change to one file
// rebuilds that connection's driver and touches no other. The proxy keeps
// one slot per connection and checks a file only when a call names it
// (docs/proxy.md "Live reload"), so this holds by construction; these
// prove it, and measure what a reload and an unchanged call cost.

const scaleConns = 1000

// warmThousand writes scaleConns fake connections and builds each one's
// driver once; it returns their names.
func warmThousand(tb testing.TB, r *rig) []string {
	tb.Helper()
	names := make([]string, scaleConns)
	for i := range names {
		names[i] = fmt.Sprintf("c%04d", i)
		r.write(names[i], "driver: fake-test\nfake:\n  label: scale-"+names[i]+"\n")
	}
	for _, n := range names {
		l, err := r.conns.Acquire(context.Background(), n, false)
		if err != nil {
			tb.Fatalf("connection %s: %v", n, err)
		}
		l.Release()
	}
	if got := r.conns.Open(); got != scaleConns {
		tb.Fatalf("%d drivers open after warming, want %d", got, scaleConns)
	}
	return names
}

func (r *rig) instanceOf(name string) *instance {
	r.conns.mu.Lock()
	sl := r.conns.slots[name]
	r.conns.mu.Unlock()
	if sl == nil {
		return nil
	}
	return sl.get()
}

// TestReloadOneOfAThousand: one file of 1,000 changes; the next call on it
// gets a driver built from the new content, and every other connection
// keeps the very driver it had.
func TestReloadOneOfAThousand(t *testing.T) {
	r := newRig(t)
	names := warmThousand(t, r)
	before := make(map[string]*instance, len(names))
	for _, n := range names {
		before[n] = r.instanceOf(n)
	}
	changed := names[scaleConns/2]
	// A longer label: the size changes even when the clock's tick does not.
	r.write(changed, "driver: fake-test\nfake:\n  label: scale-"+changed+"-edited\n")
	l, err := r.conns.Acquire(context.Background(), changed, false)
	if err != nil {
		t.Fatal(err)
	}
	got := l.Driver.(*fakeDriver).label
	l.Release()
	if got != "scale-"+changed+"-edited" {
		t.Fatalf("after the edit, connection %s serves label %q; want the new file's", changed, got)
	}
	if r.instanceOf(changed) == before[changed] {
		t.Fatalf("connection %s kept its old driver after its file changed", changed)
	}
	for _, n := range names {
		if n == changed {
			continue
		}
		l, err := r.conns.Acquire(context.Background(), n, false)
		if err != nil {
			t.Fatalf("connection %s after another's edit: %v", n, err)
		}
		l.Release()
		if r.instanceOf(n) != before[n] {
			t.Fatalf("connection %s got a new driver when only %s changed", n, changed)
		}
	}
	if got := r.conns.Open(); got != scaleConns {
		t.Errorf("%d drivers open after the reload, want %d (the old one closed, the new one open)", got, scaleConns)
	}
}

// BenchmarkReloadOneOfAThousand: with 1,000 warm connections, each
// iteration edits one file (a different one each time) and times the call
// that rebuilds it (ns/reload: stat, read, parse, merge, validate, build,
// retire the old driver); then a call on an unchanged connection
// (ns/unchanged-call: one stat and the slot lookup).
func BenchmarkReloadOneOfAThousand(b *testing.B) {
	r := newRig(b)
	names := warmThousand(b, r)
	ctx := context.Background()
	var reload, unchanged time.Duration
	b.ResetTimer()
	for i := range b.N {
		n := names[i%scaleConns]
		content := fmt.Sprintf("driver: fake-test\nfake:\n  label: scale-%s-%d%s\n", n, i, strings.Repeat("x", i%2))
		if err := os.WriteFile(filepath.Join(r.folder, n+".yaml"), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		l, err := r.conns.Acquire(ctx, n, false)
		reload += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
		other := names[(i+scaleConns/2)%scaleConns]
		t0 = time.Now()
		l, err = r.conns.Acquire(ctx, other, false)
		unchanged += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
	b.ReportMetric(float64(reload.Nanoseconds())/float64(b.N), "ns/reload")
	b.ReportMetric(float64(unchanged.Nanoseconds())/float64(b.N), "ns/unchanged-call")
	if got := r.conns.Open(); got != scaleConns {
		b.Errorf("%d drivers open, want %d", got, scaleConns)
	}
}
