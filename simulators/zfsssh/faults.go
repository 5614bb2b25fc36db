package zfsssh

import (
	"io"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/faults"
)

// Faults injects failures into the commands the server runs. Command names
// are the resolved program names ("zfs", "targetcli", "sudo", ...) or a
// shell builtin's ("echo", "test", "true"); the name "" means every
// command. Nested programs count too: in "sudo zfs list", both "sudo" and
// "zfs" are subject to their faults. DropAfter counts simple commands: the
// n-th runs to completion but neither its output nor its exit status is
// sent.
type Faults struct {
	*faults.Set

	mu     sync.Mutex
	ranOut int // targetcli/nvmetcli runs left that fail with "Ran out of input"
	// dropOutAfter: drop the connection of the next exec session whose
	// stdout passes this many bytes (0: off).
	dropOutAfter int64
}

// DropStreamAfter drops the connection of the next exec session that has
// written n bytes to its stdout, mid-write, as a network failure in the
// middle of a zfs send would (n <= 0 turns it off). It fires once.
func (f *Faults) DropStreamAfter(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropOutAfter = max(n, 0)
}

// streamDrop is the pending DropStreamAfter budget: every session starting
// while one is pending watches its output; the first to cross it claims it.
func (f *Faults) streamDrop() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropOutAfter
}

func (f *Faults) claimStreamDrop() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropOutAfter == 0 {
		return false
	}
	f.dropOutAfter = 0
	return true
}

func newFaults(seed uint64) *Faults { return &Faults{Set: faults.New(seed)} }

// RanOutOfInput makes the next n targetcli or nvmetcli runs fail the way a
// concurrently rewritten preferences file makes configshell fail:
// "EOFError: Ran out of input", exit 1, nothing done.
func (f *Faults) RanOutOfInput(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ranOut = max(n, 0)
}

// Reset removes every fault.
func (f *Faults) Reset() {
	f.Set.Reset()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ranOut = 0
	f.dropOutAfter = 0
}

func (f *Faults) takeRanOut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ranOut == 0 {
		return false
	}
	f.ranOut--
	return true
}

// droppingWriter passes output on until its budget is spent, then drops
// the connection in the middle of the write that crosses it.
type droppingWriter struct {
	w       io.Writer
	f       *Faults
	left    int64
	drop    func()
	dropped bool
}

func (d *droppingWriter) Write(p []byte) (int, error) {
	if d.dropped {
		return 0, io.ErrClosedPipe
	}
	if d.left < 0 || int64(len(p)) < d.left {
		n, err := d.w.Write(p)
		d.left -= int64(n)
		return n, err
	}
	if !d.f.claimStreamDrop() {
		d.left = -1 // another session took it
		return d.w.Write(p)
	}
	n, _ := d.w.Write(p[:d.left])
	d.dropped = true
	d.drop()
	return n, io.ErrClosedPipe
}
