package infiniahost

import (
	"github.com/switchyard-csi/switchyard/simulators/infinia"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// KernelTarget makes the simulator's exposures real on this machine's
// nvmet (the storage VM): every subsystem change is put into the kernel
// through inc, so `nvme connect` reaches the volume's data file.
func KernelTarget(inc *kernel.Incremental) infinia.Target { return kernelTarget{inc} }

type kernelTarget struct{ inc *kernel.Incremental }

func (k kernelTarget) Apply(s infinia.Subsystem) error {
	ks := kernel.Subsystem{NQN: s.NQN, AllowAnyHost: s.AllowAnyHost, Hosts: s.Hosts}
	for _, n := range s.Namespaces {
		ks.Namespaces = append(ks.Namespaces, kernel.Namespace{NSID: n.NSID, Path: n.DevicePath, UUID: n.UUID})
	}
	for _, l := range s.Listeners {
		ks.Listeners = append(ks.Listeners, kernel.Listener{Addr: l.Addr, Port: l.Port})
	}
	return k.inc.PutSubsystem(ks)
}

func (k kernelTarget) Remove(nqn string) error { return k.inc.RemoveSubsystem(nqn) }
