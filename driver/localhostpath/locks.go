package localhostpath

import (
	"slices"
	"sync"
)

// keyLocks serialises work on one volume or snapshot directory inside this
// driver. The gRPC layer already serialises calls per name and per id, but
// not a CreateVolume (locked by name) against a DeleteVolume of the id it
// maps to, nor two names hashed to one id (crc8 has 256 values), and tests
// call the driver directly.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	refs int
}

// lock takes every key, in sorted order so that two callers sharing keys
// never deadlock, and returns the function that releases them.
func (l *keyLocks) lock(keys ...string) (unlock func()) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	taken := make([]*keyLock, len(keys))
	for i, k := range keys {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[string]*keyLock{}
		}
		kl := l.held[k]
		if kl == nil {
			kl = &keyLock{}
			l.held[k] = kl
		}
		kl.refs++
		l.mu.Unlock()
		kl.Lock()
		taken[i] = kl
	}
	return func() {
		for i := len(keys) - 1; i >= 0; i-- {
			kl := taken[i]
			kl.Unlock()
			l.mu.Lock()
			kl.refs--
			if kl.refs == 0 {
				delete(l.held, keys[i])
			}
			l.mu.Unlock()
		}
	}
}
