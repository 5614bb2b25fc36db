package infinia

import (
	"testing"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// TestCompleteAnswer: an expose's answer stands in for reading the
// subsystem only when it shows the volume's namespace and a listener on
// every instance the create exposed.
func TestCompleteAnswer(t *testing.T) {
	v := &api.Volume{Name: "pvc-1", Subsystem: "pvc-1"}
	l := func(id string) api.Listener {
		return api.Listener{TrType: "TCP", TrAddrs: []string{"10.0.0." + id}, InstanceID: api.Flex(id)}
	}
	full := func() *api.Subsystem {
		return &api.Subsystem{Name: "pvc-1", NQN: "nqn.x", Namespaces: []api.Namespace{{NSID: "1", Volume: "pvc-1"}},
			Listeners: []api.Listener{l("1"), l("2"), l("3")}}
	}
	if !completeAnswer(full(), v, []int{1, 2, 3}) {
		t.Fatal("a complete answer was not taken")
	}
	for name, change := range map[string]func(*api.Subsystem){
		"another subsystem":          func(s *api.Subsystem) { s.Name = "other" },
		"no NQN":                     func(s *api.Subsystem) { s.NQN = "" },
		"no namespace of the volume": func(s *api.Subsystem) { s.Namespaces[0].Volume = "pvc-2" },
		"namespace without nsid":     func(s *api.Subsystem) { s.Namespaces[0].NSID = "" },
		"an instance missing":        func(s *api.Subsystem) { s.Listeners = s.Listeners[:2] },
		"listeners without ids": func(s *api.Subsystem) {
			for i := range s.Listeners {
				s.Listeners[i].InstanceID = ""
			}
		},
		"a listener without addresses": func(s *api.Subsystem) { s.Listeners[2].TrAddrs = nil },
	} {
		s := full()
		change(s)
		if completeAnswer(s, v, []int{1, 2, 3}) {
			t.Errorf("%s: taken as complete", name)
		}
	}
	if completeAnswer(nil, v, []int{1}) {
		t.Error("no answer taken as complete")
	}
}
