package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// recorder is an Observer that writes down what it is told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) ConnectionLoaded(name, file string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("loaded %s %s ok=%v", name, filepath.Base(file), err == nil))
}

func (r *recorder) ConnectionRemoved(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "removed "+name)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// The observer hears each version of a file once, whether the cache keeps
// the driver, closes it when idle and rebuilds it, or builds one per call;
// and a removed file once.
func TestObserverHearsEachFileVersionOnce(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		t.Run(fmt.Sprintf("noCache=%v", noCache), func(t *testing.T) {
			// The timeout is set before the janitor starts (it reads it).
			r := newRig(t, func(s *Settings) { s.NoCache, s.CacheTimeout = noCache, time.Hour })
			rec := &recorder{}
			r.conns.SetObserver(rec)
			r.fake("a")
			for i := range 3 {
				_, _ = r.create("a", fmt.Sprintf("pvc-%d", i))
			}
			if e := rec.take(); len(e) != 1 || e[0] != "loaded a a.yaml ok=true" {
				t.Fatalf("events %q, want one load", e)
			}
			// Idle close and rebuild of the same version: no new event.
			r.conns.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
			r.conns.closeIdle()
			r.conns.now = time.Now
			if n := r.conns.Open(); n != 0 {
				t.Fatalf("%d drivers open after the idle close", n)
			}
			_, _ = r.create("a", "pvc-x")
			if e := rec.take(); len(e) != 0 {
				t.Fatalf("events after an idle rebuild %q, want none", e)
			}
			r.write("a", "driver: [\n")
			_, _ = r.create("a", "pvc-y")
			_, _ = r.create("a", "pvc-z")
			if e := rec.take(); len(e) != 1 || e[0] != "loaded a a.yaml ok=false" {
				t.Fatalf("events after breaking the file %q, want one failed load", e)
			}
			if err := os.Remove(filepath.Join(r.folder, "a.yaml")); err != nil {
				t.Fatal(err)
			}
			_, _ = r.create("a", "pvc-1")
			_, _ = r.create("a", "pvc-2")
			if e := rec.take(); len(e) != 1 || e[0] != "removed a" {
				t.Fatalf("events after removing the file %q, want one removal", e)
			}
		})
	}
}
