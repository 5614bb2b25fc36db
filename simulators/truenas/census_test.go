package truenas

import (
	"sort"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/census"
)

// TestCensusMethods walks every method the simulator serves, per release,
// against the release's census (simulators/truenas/census, derived from the
// middleware at the release tag): the method must exist there (or be one
// of the private methods clients call, listed with why), with the same job
// flag and parameter names.
func TestCensusMethods(t *testing.T) {
	total := 0
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			c, err := census.Load(v)
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, v)
			var missing []string
			for _, name := range s.Registry().Names() {
				if strings.HasPrefix(name, "test.") {
					continue
				}
				total++
				m, _ := s.Registry().Lookup(name)
				want, ok := c.Methods[name]
				if !ok {
					if _, private := privateServed[name]; private {
						continue
					}
					missing = append(missing, name)
					continue
				}
				if m.Job != want.Job {
					t.Errorf("%s: job=%v, the release's is %v", name, m.Job, want.Job)
				}
				if len(want.Params) > 0 && strings.Join(m.Params, ",") != strings.Join(want.Params, ",") {
					t.Errorf("%s: params %v, the release's are %v", name, m.Params, want.Params)
				}
			}
			sort.Strings(missing)
			for _, n := range missing {
				t.Errorf("%s is served but %s (%s) has no public method of that name", n, c.Source.Tag, c.Source.Commit[:12])
			}
		})
	}
	t.Logf("%d served methods checked", total)
}

// privateServed are methods the simulator serves that the census leaves
// out because the middleware marks them private, yet clients call them
// (private methods answer over WebSocket, with a warning in its log).
var privateServed = map[string]string{
	"core.get_methods":          "private up to 25.04 (@private in core_service.py), public from 25.10; clients list methods with it on every release",
	"nvmet.global.ana_enabled":  "private in plugins/nvmet/global.py; the simulator answers it for switchyard's NVMe-oF checks",
	"nvmet.global.rdma_enabled": "private in plugins/nvmet/global.py; the simulator answers it for switchyard's NVMe-oF checks",
}

// commonlyCalled are methods TrueNAS clients call (democratic-csi's
// diagnostics, the Go drivers' health checks, the web UI's dashboard)
// that the simulator does not implement.
var commonlyCalled = []string{"user.query", "group.query", "disk.query", "interface.query", "pool.scrub.run",
	"smb.config", "nfs.config", "alert.list", "system.general.config", "network.configuration.config"}

// TestCensusUnimplementedAnswerLikeUnknown: a method the release has but
// the simulator does not serve answers exactly as the middleware answers a
// method it does not know (JSON-RPC -32601 "Method does not exist", no
// data; the legacy protocol's ENOMETHOD "Method 'm' not found in 's'"),
// and core.get_methods lists only what is served.
func TestCensusUnimplementedAnswerLikeUnknown(t *testing.T) {
	for _, v := range []string{"24.10", "25.10"} {
		t.Run(v, func(t *testing.T) {
			c, _ := census.Load(v)
			s := startServer(t, v)
			var listed map[string]any
			cl := dialAny(t, s)
			cl.decode(cl.mustCall("core.get_methods"), &listed)
			for _, name := range commonlyCalled {
				if _, has := c.Methods[name]; !has {
					t.Errorf("%s is not in the %s census: pick methods the release has", name, v)
					continue
				}
				if _, served := s.Registry().Lookup(name); served {
					continue
				}
				if _, ok := listed[name]; ok {
					t.Errorf("core.get_methods lists %s, which is not served", name)
				}
				if cl.rpc != nil {
					a := cl.rpc.call(name)
					if a.Error == nil || a.Error.Code != -32601 || a.Error.Message != "Method does not exist" || a.Error.Data != nil {
						t.Errorf("%s: %+v, want -32601 \"Method does not exist\" without data", name, a.Error)
					}
					continue
				}
				svc, m, _ := cutLast(name, ".")
				_, werr := cl.callRaw(name)
				want := "[ENOMETHOD] Method '" + m + "' not found in '" + svc + "'"
				if werr == nil || werr.Errno != 201 || werr.Reason != want {
					t.Errorf("%s over the legacy protocol: %+v, want %s", name, werr, want)
				}
			}
		})
	}
}
