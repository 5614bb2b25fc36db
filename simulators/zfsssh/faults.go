package zfsssh

import (
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
