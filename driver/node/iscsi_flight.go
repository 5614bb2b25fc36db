package node

import (
	"context"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// An iSCSI attach runs iscsiadm several times in a row (record, settings,
// login, rescan). On a loaded node each call took 10–37 s, so the whole
// overran the kubelet's 2-minute NodeStageVolume deadline; cutting it
// there and letting the kubelet's retry start over made every retry
// overrun too. So a started attach runs to its end under its own limit
// (attachLimit), detached from the request, and a retry of the same
// volume joins it instead of starting another.

// DefaultAttachLimit bounds one started attach (it covers a few retried
// commands of DefaultCommandTimeout each and the device wait).
const DefaultAttachLimit = 10 * time.Minute

// attachFlights are the attaches started on this node, by key.
type attachFlights struct {
	mu sync.Mutex
	m  map[string]*attachFlight
}

// attachFlight is one attach; dev and err are set before done closes.
type attachFlight struct {
	done     chan struct{}
	started  time.Time
	finished time.Time
	dev      string
	err      error
}

// join runs fn once per key: a caller finds the attach of an earlier
// request running (or finished with a device that no request took yet)
// and waits for it, or starts it. fn runs detached from ctx under limit.
// When ctx ends first, join returns Aborted: the attach goes on and the
// next retry picks up its result.
func (fl *attachFlights) join(ctx context.Context, h *Host, key, what string, fn func(context.Context) (string, error)) (string, error) {
	limit := h.environ().attachLimit
	f, started := fl.startOrJoin(key, limit)
	if started {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		go func() {
			defer cancel()
			dev, err := fn(actx)
			fl.finish(key, f, dev, err)
		}()
	} else {
		h.Log.Info("joining the attach that an earlier request started", "what", what, "running", time.Since(f.started).Round(time.Second))
	}
	select {
	case <-f.done:
		fl.take(key, f)
		return f.dev, f.err
	case <-ctx.Done():
		return "", status.Errorf(codes.Aborted, "%s: still running after %v (%v); it goes on for up to %v and a retry of this request takes its result",
			what, time.Since(f.started).Round(time.Second), ctx.Err(), limit)
	}
}

// startOrJoin returns the flight to wait for and whether the caller must
// start it. A finished flight is joined only if it gave a device that
// still exists and is younger than limit; failures are never reused.
func (fl *attachFlights) startOrJoin(key string, limit time.Duration) (*attachFlight, bool) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if f, ok := fl.m[key]; ok {
		select {
		case <-f.done:
			if f.err == nil && time.Since(f.finished) < limit && exists(f.dev) {
				return f, false
			}
		default:
			return f, false
		}
	}
	if fl.m == nil {
		fl.m = map[string]*attachFlight{}
	}
	f := &attachFlight{done: make(chan struct{}), started: time.Now()}
	fl.m[key] = f
	return f, true
}

// finish records the result. A failed attach is forgotten at once (a
// retry starts over); a device stays until a request takes it.
func (fl *attachFlights) finish(key string, f *attachFlight, dev string, err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	f.dev, f.err, f.finished = dev, err, time.Now()
	if err != nil && fl.m[key] == f {
		delete(fl.m, key)
	}
	close(f.done)
}

// take forgets a finished flight once a request has its result: the
// volume is staged from then on, or its stage failed after the attach
// (then a retry attaches again, which finds the session).
func (fl *attachFlights) take(key string, f *attachFlight) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.m[key] == f {
		delete(fl.m, key)
	}
}

// forget drops the finished attaches whose keys start with prefix (an
// unstage released what they made). A running one holds the target lock,
// which the unstage waits for, so it has finished by then.
func (fl *attachFlights) forget(prefix string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for k, f := range fl.m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		select {
		case <-f.done:
			delete(fl.m, k)
		default:
		}
	}
}
