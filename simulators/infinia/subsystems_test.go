package infinia

import (
	"reflect"
	"strings"
	"testing"
)

const hostA = "nqn.2014-08.org.nvmexpress:uuid:aaaa"

// TestSubsystemRoutes: every subsystem and host route's success and error
// answers.
func TestSubsystemRoutes(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	ss := pathP + "/subsystems/pvc-1"
	runSteps(t, c, []step{
		{"get absent", "GET", ss, nil, 404, "subsystem red/pvc-1 not found"},
		{"create", "POST", ss, map[string]any{"transport": "TCP", "reqInstances": []int{1, 2, 3}, "port": 4420}, 201, "OK"},
		{"create again", "POST", ss, map[string]any{"transport": "TCP"}, 409, "subsystem red/pvc-1 already exists"},
		{"bad name", "POST", pathP + "/subsystems/.x", nil, 400, `subsystem name ".x" is invalid`},
		{"RDMA", "POST", pathP + "/subsystems/x", map[string]any{"transport": "RDMA"}, 400, "transport must be TCP"},
		{"bad port", "POST", pathP + "/subsystems/x", map[string]any{"port": 70000}, 400, "port must be 1 to 65535"},
		{"unknown instance", "POST", pathP + "/subsystems/x", map[string]any{"reqInstances": []int{1, 7}}, 404, "instance 7 not found"},
		{"reqInstances not a list", "POST", pathP + "/subsystems/x", `{"reqInstances": 1}`, 400, "reqInstances must be a JSON array"},
		{"other subtenant", "POST", pathT + "/subtenants/nope/subsystems/x", nil, 404, "subtenant red/nope not found"},
		{"get", "GET", ss, nil, 200, "OK"},
		{"hosts empty", "GET", ss + "/hosts", nil, 200, "OK"},
		{"add host", "POST", ss + "/hosts", map[string]any{"host_nqn": hostA}, 201, "OK"},
		{"add host again", "POST", ss + "/hosts", map[string]any{"host_nqn": hostA}, 409, "already added to subsystem red/pvc-1"},
		{"add bad host", "POST", ss + "/hosts", map[string]any{"host_nqn": "iqn.2005-03.org.open-iscsi:x"}, 400, "is not an NVMe qualified name"},
		{"add host with slash", "POST", ss + "/hosts", map[string]any{"host_nqn": "nqn.a/b"}, 400, "is not an NVMe qualified name"},
		{"add host no body", "POST", ss + "/hosts", nil, 400, "JSON request body is required"},
		{"add host to absent", "POST", pathP + "/subsystems/nope/hosts", map[string]any{"host_nqn": hostA}, 404, "subsystem red/nope not found"},
		{"volume in it", "POST", pathD + "/volumes", volBody("pvc-1", 10, "pvc-1"), 201, "OK"},
		{"delete with namespaces", "DELETE", ss, nil, 409, "has namespaces (volumes csiService/pvc-1)"},
		{"remove host", "DELETE", ss + "/hosts/" + hostA, nil, 200, "OK"},
		{"remove host again", "DELETE", ss + "/hosts/" + hostA, nil, 404, "host " + hostA + " not found in subsystem red/pvc-1"},
		{"delete forced", "DELETE", ss + "?force=true", nil, 200, "OK"},
		{"delete again", "DELETE", ss + "?force=true", nil, 404, "not found"},
		{"hosts of absent", "GET", ss + "/hosts", nil, 404, "not found"},
		{"delete empty", "POST", pathP + "/subsystems/empty", nil, 201, "OK"},
		{"delete empty unforced", "DELETE", pathP + "/subsystems/empty", nil, 200, "OK"},
	})
	// The forced delete detached the volume, which stays.
	var got struct{ Volume volume }
	c.call("GET", pathD+"/volumes/pvc-1", nil).must(t, 200).decode(t, &got)
	if got.Volume.Subsystem != "" || got.Volume.NSID != 0 {
		t.Errorf("volume after its subsystem went: %+v", got.Volume)
	}
	c.call("PUT", pathD+"/volumes/pvc-1/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}).must(t, 409)
}

// TestSubsystemShape: the subsystem, the namespaces, the listeners and
// GET P/list have the contract's fields and values.
func TestSubsystemShape(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.mkVolume("pvc-x", 64)
	for _, i := range []int{3, 1} {
		c.call("PUT", pathD+"/volumes/pvc-x/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": i}}).must(t, 200)
	}
	c.call("POST", pathP+"/subsystems/pvc-x/hosts", map[string]any{"host_nqn": hostA}).must(t, 201)
	var ss subsystemJSON
	c.call("GET", pathP+"/subsystems/pvc-x", nil).must(t, 200).decode(t, &ss)
	var v struct{ Volume volume }
	c.call("GET", pathD+"/volumes/pvc-x", nil).must(t, 200).decode(t, &v)
	want := subsystemJSON{
		Name: "pvc-x", NQN: "nqn.2023-03.com.ddn:red:clu1:red:red:pvc-x", Serial: ss.Serial, Model: "RED Controller",
		Hosts:      []string{hostA},
		Namespaces: []namespaceJSON{{NSID: 1, Volume: "pvc-x", UUID: v.Volume.UUID, NGUID: strings.ToUpper(strings.ReplaceAll(v.Volume.UUID, "-", ""))}},
		Listeners: []listenerJSON{
			{TrType: "TCP", AdrFam: "IPv4", TrSvcID: "4420", TrAddrs: []string{"127.0.0.1"}, InstanceID: 1},
			{TrType: "TCP", AdrFam: "IPv4", TrSvcID: "4420", TrAddrs: []string{"127.0.0.3"}, InstanceID: 3},
		},
	}
	if !reflect.DeepEqual(ss, want) {
		t.Errorf("subsystem\n got %+v\nwant %+v", ss, want)
	}
	if !snRE.MatchString(ss.Serial) {
		t.Errorf("serial %q", ss.Serial)
	}
	var hosts []string
	c.call("GET", pathP+"/subsystems/pvc-x/hosts", nil).must(t, 200).decode(t, &hosts)
	if !reflect.DeepEqual(hosts, []string{hostA}) {
		t.Errorf("hosts %v", hosts)
	}
	c.call("POST", pathP+"/subsystems/aaa", map[string]any{"port": 4421}).must(t, 201)
	var list struct {
		Targets []struct{ Subsystems []subsystemJSON }
	}
	c.call("GET", pathP+"/list", nil).must(t, 200).decode(t, &list)
	if len(list.Targets) != 1 || len(list.Targets[0].Subsystems) != 2 {
		t.Fatalf("list %+v", list)
	}
	if l := list.Targets[0].Subsystems; l[0].Name != "aaa" || !reflect.DeepEqual(l[1], want) || l[0].Hosts == nil || l[0].Listeners == nil {
		t.Errorf("list %+v", l)
	}
	// unexpose takes this volume's listeners away.
	c.call("DELETE", pathD+"/volumes/pvc-x/unexpose", nil).must(t, 200).decode(t, &ss)
	if len(ss.Listeners) != 0 {
		t.Errorf("listeners after unexpose: %+v", ss.Listeners)
	}
}

// TestSharedListeners: a listener two volumes exposed stays until both
// are unexposed or gone.
func TestSharedListeners(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/shared", nil).must(t, 201)
	for _, n := range []string{"a", "b"} {
		c.call("POST", pathD+"/volumes", volBody(n, 1, "shared")).must(t, 201)
		c.call("PUT", pathD+"/volumes/"+n+"/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 2}}).must(t, 200)
	}
	listeners := func() int {
		var ss subsystemJSON
		c.call("GET", pathP+"/subsystems/shared", nil).must(t, 200).decode(t, &ss)
		return len(ss.Listeners)
	}
	if n := listeners(); n != 1 {
		t.Fatalf("%d listeners, want 1", n)
	}
	c.call("DELETE", pathD+"/volumes/a/unexpose", nil).must(t, 200)
	if n := listeners(); n != 1 {
		t.Fatalf("after unexposing a: %d listeners, want 1", n)
	}
	c.call("DELETE", pathD+"/volumes/b", nil).must(t, 200)
	if n := listeners(); n != 0 {
		t.Fatalf("after deleting b: %d listeners, want 0", n)
	}
}
