package node

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// volumeLocks serialises calls on one volume while unrelated volumes
// proceed in parallel. The gRPC layer serialises per volume too; this makes
// the Service safe on its own (records are read-modify-write).
type volumeLocks struct {
	mu sync.Mutex
	m  map[string]*volumeLock
}

type volumeLock struct {
	ch   chan struct{} // holds a token while locked
	refs int           // holders and waiters; the entry goes at zero
}

func newVolumeLocks() *volumeLocks { return &volumeLocks{m: map[string]*volumeLock{}} }

// lock waits for the volume's lock, or fails with ABORTED when ctx ends
// first (the CO retries). It returns the unlock function.
func (l *volumeLocks) lock(ctx context.Context, id string) (func(), error) {
	l.mu.Lock()
	e := l.m[id]
	if e == nil {
		e = &volumeLock{ch: make(chan struct{}, 1)}
		l.m[id] = e
	}
	e.refs++
	l.mu.Unlock()

	select {
	case e.ch <- struct{}{}:
		return func() { <-e.ch; l.release(id, e) }, nil
	case <-ctx.Done():
		l.release(id, e)
		return nil, status.Errorf(codes.Aborted, "volume %s: another operation on it is in progress (%v)", id, ctx.Err())
	}
}

func (l *volumeLocks) release(id string, e *volumeLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(l.m, id)
	}
}
