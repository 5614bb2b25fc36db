// Package keylock serialises work on string keys (volume ids, names,
// snapshot ids): callers on one key run one at a time, callers on different
// keys in parallel. The gRPC server (per-call keys), the node host (shared
// targets) and backends share it.
package keylock

import (
	"context"
	"slices"
	"sync"
)

// Set is a set of key locks; its zero value is ready to use. A waiter
// gives up when its context ends.
type Set struct {
	mu   sync.Mutex
	held map[string]*keyLock
	free []*keyLock // released locks kept for reuse (at most maxFree)
}

// maxFree bounds the locks kept for reuse: enough for the calls in flight
// of a busy driver, never more memory than that.
const maxFree = 64

type keyLock struct {
	ch   chan struct{} // a one-slot semaphore: select-able, unlike sync.Mutex
	refs int
}

// Lock takes every key (sorted, so two callers sharing keys never deadlock)
// and returns the function that releases them. It fails with ctx.Err()
// when the context ends first; nothing stays held then.
func (l *Set) Lock(ctx context.Context, keys ...string) (func(), error) {
	if len(keys) == 1 {
		// Most calls lock one key (a volume, a name): no sorting and no
		// list of what was taken (issue 16: a call's own allocations).
		k := keys[0]
		kl, err := l.lock(ctx, k)
		if err != nil {
			return nil, err
		}
		return func() { l.unlock(k, kl) }, nil
	}
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	taken := make([]*keyLock, 0, len(keys))
	release := func() {
		for i := len(taken) - 1; i >= 0; i-- {
			l.unlock(keys[i], taken[i])
		}
	}
	for _, k := range keys {
		kl, err := l.lock(ctx, k)
		if err != nil {
			release()
			return nil, err
		}
		taken = append(taken, kl)
	}
	return release, nil
}

func (l *Set) lock(ctx context.Context, key string) (*keyLock, error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*keyLock{}
	}
	kl := l.held[key]
	if kl == nil {
		if n := len(l.free); n > 0 {
			kl, l.free = l.free[n-1], l.free[:n-1]
		} else {
			kl = &keyLock{ch: make(chan struct{}, 1)}
		}
		l.held[key] = kl
	}
	kl.refs++
	l.mu.Unlock()

	// A free key is taken without asking the context for its Done
	// channel (which a context may make on first use).
	select {
	case kl.ch <- struct{}{}:
		return kl, nil
	default:
	}
	select {
	case kl.ch <- struct{}{}:
		return kl, nil
	case <-ctx.Done():
		l.drop(key, kl)
		return nil, ctx.Err()
	}
}

// unlock releases key, which this caller holds as kl.
func (l *Set) unlock(key string, kl *keyLock) {
	<-kl.ch
	l.drop(key, kl)
}

// drop ends one caller's interest in kl. The last one removes the key; its
// lock is then empty (every holder emptied the semaphore before dropping,
// a waiter that gave up never filled it) and referenced by nobody, so it
// can serve another key.
func (l *Set) drop(key string, kl *keyLock) {
	l.mu.Lock()
	kl.refs--
	if kl.refs == 0 {
		delete(l.held, key)
		if len(l.free) < maxFree {
			l.free = append(l.free, kl)
		}
	}
	l.mu.Unlock()
}

// Len is the number of keys currently held or waited for (for tests).
func (l *Set) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}
