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
}

type keyLock struct {
	ch   chan struct{} // a one-slot semaphore: select-able, unlike sync.Mutex
	refs int
}

// Lock takes every key (sorted, so two callers sharing keys never deadlock)
// and returns the function that releases them. It fails with ctx.Err()
// when the context ends first; nothing stays held then.
func (l *Set) Lock(ctx context.Context, keys ...string) (func(), error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	taken := make([]string, 0, len(keys))
	release := func() {
		for i := len(taken) - 1; i >= 0; i-- {
			l.unlock(taken[i])
		}
	}
	for _, k := range keys {
		if err := l.lock(ctx, k); err != nil {
			release()
			return nil, err
		}
		taken = append(taken, k)
	}
	return release, nil
}

func (l *Set) lock(ctx context.Context, key string) error {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*keyLock{}
	}
	kl := l.held[key]
	if kl == nil {
		kl = &keyLock{ch: make(chan struct{}, 1)}
		l.held[key] = kl
	}
	kl.refs++
	l.mu.Unlock()

	select {
	case kl.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		l.drop(key, kl)
		return ctx.Err()
	}
}

func (l *Set) unlock(key string) {
	l.mu.Lock()
	kl := l.held[key]
	l.mu.Unlock()
	<-kl.ch
	l.drop(key, kl)
}

// drop forgets a key once nobody holds or waits for it, so the map does not
// grow with every volume ever seen.
func (l *Set) drop(key string, kl *keyLock) {
	l.mu.Lock()
	kl.refs--
	if kl.refs == 0 {
		delete(l.held, key)
	}
	l.mu.Unlock()
}

// Len is the number of keys currently held or waited for (for tests).
func (l *Set) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}
