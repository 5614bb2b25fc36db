package zfs

import (
	"context"
	"sync"
)

// sshLimiter is a counting semaphore whose limit can only shrink: it
// starts at SSHConfig.MaxSessions and drops when the server shows (by
// refusing a session) that its own MaxSessions is lower.
type sshLimiter struct {
	mu       sync.Mutex
	limit    int
	inUse    int
	maxInUse int
	// freed is closed (and replaced) when a slot frees while someone
	// waits (waiting), waking every waiter to re-check. Without waiters
	// a release makes no channel: the usual case, one per program.
	freed   chan struct{}
	waiting bool
}

func newSSHLimiter(limit int) *sshLimiter {
	return &sshLimiter{limit: limit, freed: make(chan struct{})}
}

// acquire takes a slot or fails with ctx's error.
func (l *sshLimiter) acquire(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		if l.inUse < l.limit {
			l.inUse++
			l.maxInUse = max(l.maxInUse, l.inUse)
			l.mu.Unlock()
			return nil
		}
		wake := l.freed
		l.waiting = true
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *sshLimiter) release() {
	l.mu.Lock()
	l.inUse--
	l.wakeLocked()
	l.mu.Unlock()
}

// lower caps the limit at n (never below 1, never above what it was).
func (l *sshLimiter) lower(n int) (limit int, changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = max(n, 1)
	if n < l.limit {
		l.limit = n
		changed = true
	}
	return l.limit, changed
}

func (l *sshLimiter) wakeLocked() {
	if !l.waiting {
		return
	}
	close(l.freed)
	l.freed = make(chan struct{})
	l.waiting = false
}

// snapshot reports the current limit, slots in use and the high-water mark.
func (l *sshLimiter) snapshot() (limit, inUse, maxInUse int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit, l.inUse, l.maxInUse
}
