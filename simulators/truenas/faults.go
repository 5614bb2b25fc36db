package truenas

import "github.com/switchyard-csi/switchyard/simulators/faults"

// Faults injects failures into method calls, on every transport. Method
// names are full ("pool.dataset.create"); "" means every method. An
// injected error is a CallError EFAULT "injected fault"; DropAfter closes
// the TCP connection instead of sending the n-th call's answer.
type Faults = faults.Set

func newFaults(seed uint64) *Faults { return faults.New(seed) }

// Faults is the fault-injection control.
func (s *Server) Faults() *Faults { return s.faults }
