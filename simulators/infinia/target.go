package infinia

import (
	"net"
	"slices"
	"strconv"
)

// Target mirrors the simulator's NVMe-oF subsystems into a real target
// (e.g. the kernel's nvmet through configfs), so that a volume made
// through the REST API can be connected to with nvme-cli.
//
// Apply is called, with the server's lock held, after every change to a
// subsystem's Subsystem snapshot: creation, host add/remove, expose and
// unexpose (listeners), namespace add/remove (volume create/delete,
// subsystem delete with force) and volume resize (the data file has its
// new size when Apply runs). It receives the complete desired state, so
// an implementation converges rather than replaying deltas. Remove is
// called when the subsystem is deleted. An error from either fails the
// REST call with 500 and the change is rolled back (the tree, the data
// files, and a best-effort Apply of the previous snapshot).
type Target interface {
	Apply(Subsystem) error
	Remove(nqn string) error
}

// Subsystem is what a Target needs of one subsystem.
type Subsystem struct {
	NQN          string
	AllowAnyHost bool
	Hosts        []string // host NQNs allowed to connect
	Namespaces   []Namespace
	Listeners    []Listener
}

// Namespace is a volume exported by a subsystem.
type Namespace struct {
	NSID       int
	UUID       string // also the NGUID, upper case without dashes
	DevicePath string // the volume's data file (<StateDir>/volumes/<uuid>.img)
}

// Listener is a TCP address the subsystem is reachable on.
type Listener struct {
	Addr string // the instance's data_ip
	Port int
}

// snapshot builds a subsystem's Subsystem (nil when sub is nil).
func (s *Server) snapshot(cl *cluster, sub *subsystem) *Subsystem {
	if sub == nil {
		return nil
	}
	out := &Subsystem{NQN: sub.NQN, AllowAnyHost: sub.AllowAnyHost}
	if len(sub.Hosts) > 0 { // nil either way, so that snapshots compare equal
		out.Hosts = slices.Clone(sub.Hosts)
	}
	for _, ns := range sub.Namespaces {
		out.Namespaces = append(out.Namespaces, Namespace{NSID: ns.NSID, UUID: ns.UUID, DevicePath: s.store.dataPath(ns.UUID)})
	}
	for _, l := range sub.Listeners {
		if in, ok := cl.instance(l.InstanceID); ok {
			out.Listeners = append(out.Listeners, Listener{Addr: in.DataIP, Port: sub.Port})
		}
	}
	return out
}

// String is the listener's host:port.
func (l Listener) String() string { return net.JoinHostPort(l.Addr, strconv.Itoa(l.Port)) }
