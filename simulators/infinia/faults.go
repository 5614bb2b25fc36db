package infinia

import "github.com/switchyard-csi/switchyard/simulators/faults"

// Faults injects failures into REST calls. Operations are named after
// what they do (see the package documentation: "login", "volume.create",
// "host.add", ...); "" means every call. An injected error is a 503
// {"title": "injected fault", "data": null} and the call does not run;
// DropAfter runs the n-th call and closes its connection instead of
// answering.
type Faults = faults.Set

func newFaults(seed uint64) *Faults { return faults.New(seed) }

// Faults is the fault-injection control.
func (s *Server) Faults() *Faults { return s.faults }
