package infinia

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// fakeInfinia is an in-memory stand-in for one tenant (clu1/red) of the
// Infinia REST API, enough for the driver's flows. The real simulator is
// used by the lab tests; this one keeps unit tests fast and lets them
// inject answers.
type fakeInfinia struct {
	t        *testing.T
	password string
	url      string

	mu        sync.Mutex
	tokens    map[string]bool
	subs      map[string]*fakeSub
	instances map[int]string // id → data address
	capacity  api.Capacity
	inject    map[string]int // "METHOD /path" → status to answer once
	logins    int
	nextID    int
	// hold, when set, runs before a request is served, outside the lock
	// (a test holds requests in it to see which ones are in flight at once).
	hold func(r *http.Request)
	// lostExposes answers that many exposes 200 without applying them (an
	// expose lost to another one of the same subsystem at once).
	lostExposes int
}

type fakeSub struct {
	quota, usage int64
	services     map[string]*api.Service
	datasets     map[string]*fakeDataset
	subsystems   map[string]*api.Subsystem
}

type fakeDataset struct {
	quota   int64
	volumes map[string]*api.Volume
}

func newFake(t *testing.T) *fakeInfinia {
	f := &fakeInfinia{t: t, password: "pw-1234", tokens: map[string]bool{}, subs: map[string]*fakeSub{},
		instances: map[int]string{1: "127.0.0.1", 2: "127.0.0.2", 3: "127.0.0.3"},
		capacity:  api.Capacity{Total: 100 << 30, Used: 10 << 30}, inject: map[string]int{}}
	f.addService("red", "csiService", 1, 2)
	mux := http.NewServeMux()
	f.routes(mux)
	srv := httptest.NewServer(f.wrap(mux))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeInfinia) addService(sub, name string, instances ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.subs[sub]
	if s == nil {
		s = &fakeSub{services: map[string]*api.Service{}, datasets: map[string]*fakeDataset{}, subsystems: map[string]*api.Subsystem{}}
		f.subs[sub] = s
	}
	s.services[name] = &api.Service{Name: name, Type: "block", Dataset: name, Instances: instances}
	s.datasets[name] = &fakeDataset{volumes: map[string]*api.Volume{}}
}

func (f *fakeInfinia) injectOnce(key string, code int) {
	f.mu.Lock()
	f.inject[key] = code
	f.mu.Unlock()
}

type reply struct {
	code  int
	title string
	data  any
}

func ok(data any) reply { return reply{200, "OK", data} }
func fail(code int, format string, a ...any) reply {
	return reply{code, fmt.Sprintf(format, a...), nil}
}

// wrap does login, auth and injected failures around the routes.
func (f *fakeInfinia) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		hold := f.hold
		f.mu.Unlock()
		if hold != nil {
			hold(r)
		}
		f.mu.Lock()
		key := r.Method + " " + r.URL.Path
		code, injected := f.inject[key]
		delete(f.inject, key)
		f.mu.Unlock()
		if injected {
			writeReply(w, fail(code, "injected %d", code))
			return
		}
		if r.URL.Path == "/redapi/v1/auth_user" {
			f.mu.Lock()
			f.logins++
			n := f.logins
			f.mu.Unlock()
			if r.Header.Get("user_id") != "csiAccount" || r.Header.Get("password") != f.password || r.Header.Get("level") != "clu1/red" {
				writeReply(w, fail(401, "invalid credentials"))
				return
			}
			tok := "tok-" + strconv.Itoa(n)
			f.mu.Lock()
			f.tokens[tok] = true
			f.mu.Unlock()
			writeReply(w, ok(map[string]string{"token": tok}))
			return
		}
		f.mu.Lock()
		valid := f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		f.mu.Unlock()
		if !valid {
			writeReply(w, fail(401, "token expired"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeReply(w http.ResponseWriter, r reply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.code)
	_ = json.NewEncoder(w).Encode(map[string]any{"title": r.title, "data": r.data})
}

func (f *fakeInfinia) handle(mux *http.ServeMux, pattern string, h func(r *http.Request, s *fakeSub) reply) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.PathValue("c") != "clu1" || (r.PathValue("t") != "" && r.PathValue("t") != "red") {
			writeReply(w, fail(403, "token is for clu1/red"))
			return
		}
		var s *fakeSub
		if name := r.PathValue("s"); name != "" {
			if s = f.subs[name]; s == nil {
				writeReply(w, fail(404, "subtenant %s not found", name))
				return
			}
		}
		writeReply(w, h(r, s))
	})
}

func (f *fakeInfinia) routes(mux *http.ServeMux) {
	const P = "/redapi/v1/clusters/{c}/tenants/{t}/subtenants/{s}"
	f.handle(mux, "GET /redapi/v1/clusters/{c}/tenants/{t}/subtenants", func(*http.Request, *fakeSub) reply {
		var out []api.Subtenant
		for n, s := range f.subs {
			out = append(out, api.Subtenant{Name: n, BulkQuota: s.quota, Usage: s.usage})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return ok(out)
	})
	f.handle(mux, "GET "+P, func(r *http.Request, s *fakeSub) reply {
		return ok(api.Subtenant{Name: r.PathValue("s"), BulkQuota: s.quota, Usage: s.usage})
	})
	f.handle(mux, "GET "+P+"/services", func(_ *http.Request, s *fakeSub) reply {
		out := []api.Service{}
		for _, svc := range s.services {
			out = append(out, *svc)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return ok(out)
	})
	f.handle(mux, "GET "+P+"/services/{svc}", func(r *http.Request, s *fakeSub) reply {
		svc := s.services[r.PathValue("svc")]
		if svc == nil {
			return fail(404, "service %s not found", r.PathValue("svc"))
		}
		return ok(svc)
	})
	f.handle(mux, "GET "+P+"/datasets/{d}", func(r *http.Request, s *fakeSub) reply {
		ds := s.datasets[r.PathValue("d")]
		if ds == nil {
			return fail(404, "dataset not found")
		}
		var used int64
		for _, v := range ds.volumes {
			used += v.Size()
		}
		return ok(api.Dataset{Name: r.PathValue("d"), Type: "volume", BulkQuota: ds.quota, Usage: used})
	})
	f.handle(mux, "GET "+P+"/datasets/{d}/volumes", func(r *http.Request, s *fakeSub) reply {
		ds := s.datasets[r.PathValue("d")]
		if ds == nil {
			return fail(404, "dataset not found")
		}
		names := make([]string, 0, len(ds.volumes))
		for n := range ds.volumes {
			if from := r.Header.Get("from"); from == "" || n > from {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		if l, _ := strconv.Atoi(r.Header.Get("limit")); l > 0 && len(names) > l {
			names = names[:l]
		}
		out := []api.Volume{}
		for _, n := range names {
			out = append(out, *ds.volumes[n])
		}
		return ok(out)
	})
	f.handle(mux, "POST "+P+"/datasets/{d}/volumes", func(r *http.Request, s *fakeSub) reply {
		ds := s.datasets[r.PathValue("d")]
		if ds == nil {
			return fail(404, "dataset not found")
		}
		var nv api.NewVolume
		if err := json.NewDecoder(r.Body).Decode(&nv); err != nil {
			return fail(400, "bad body: %v", err)
		}
		if nv.NBlocks <= 0 {
			return fail(400, "nblocks must be > 0")
		}
		if ds.volumes[nv.VolumeName] != nil {
			return fail(409, "volume %s already exists", nv.VolumeName)
		}
		if ds.quota > 0 {
			var used int64
			for _, v := range ds.volumes {
				used += v.Size()
			}
			if used+nv.NBlocks*nv.BlockSize > ds.quota {
				return fail(507, "insufficient space")
			}
		}
		sub := s.subsystems[nv.NvmfTarget]
		if sub == nil {
			return fail(404, "subsystem %s not found", nv.NvmfTarget)
		}
		f.nextID++
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", f.nextID)
		nsid := len(sub.Namespaces) + 1
		xa := map[string]any{}
		for k, v := range nv.XAttrs {
			xa[k] = v
		}
		v := &api.Volume{UUID: uuid, Name: nv.VolumeName, VolumeID: int64(f.nextID), BlockSize: nv.BlockSize, NBlocks: nv.NBlocks,
			XAttrs: xa, Subsystem: nv.NvmfTarget, NSID: api.Flex(strconv.Itoa(nsid))}
		ds.volumes[v.Name] = v
		sub.Namespaces = append(sub.Namespaces, api.Namespace{NSID: v.NSID, Volume: v.Name, UUID: uuid})
		return reply{201, "Created", v}
	})
	f.handle(mux, "GET "+P+"/datasets/{d}/volumes/{v}", func(r *http.Request, s *fakeSub) reply {
		v := f.vol(r, s)
		if v == nil {
			return fail(404, "volume %s not found", r.PathValue("v"))
		}
		return ok(map[string]any{"volume": v})
	})
	f.handle(mux, "DELETE "+P+"/datasets/{d}/volumes/{v}", func(r *http.Request, s *fakeSub) reply {
		v := f.vol(r, s)
		if v == nil {
			return fail(404, "volume %s not found", r.PathValue("v"))
		}
		if sub := s.subsystems[v.Subsystem]; sub != nil {
			if len(sub.Hosts) > 0 && r.URL.Query().Get("force") != "true" {
				return fail(409, "volume is exported to hosts")
			}
			for i, ns := range sub.Namespaces {
				if ns.Volume == v.Name {
					sub.Namespaces = append(sub.Namespaces[:i], sub.Namespaces[i+1:]...)
					break
				}
			}
		}
		delete(s.datasets[r.PathValue("d")].volumes, v.Name)
		return ok(nil)
	})
	f.handle(mux, "PUT "+P+"/datasets/{d}/volumes/{v}/resize", func(r *http.Request, s *fakeSub) reply {
		v := f.vol(r, s)
		if v == nil {
			return fail(404, "volume not found")
		}
		var body struct{ NBlocks int64 }
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body.NBlocks < v.NBlocks {
			return fail(400, "shrinking is not supported")
		}
		if ds := s.datasets[r.PathValue("d")]; ds.quota > 0 && body.NBlocks*v.BlockSize > ds.quota {
			return fail(507, "insufficient space")
		}
		v.NBlocks = body.NBlocks
		return ok(v)
	})
	f.handle(mux, "PUT "+P+"/datasets/{d}/volumes/{v}/expose", func(r *http.Request, s *fakeSub) reply {
		v := f.vol(r, s)
		if v == nil {
			return fail(404, "volume not found")
		}
		var body struct {
			Nvmf struct {
				InstanceID int `json:"instanceId"`
			} `json:"nvmf"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		addr, known := f.instances[body.Nvmf.InstanceID]
		if !known {
			return fail(404, "instance %d not found", body.Nvmf.InstanceID)
		}
		if f.lostExposes > 0 {
			f.lostExposes--
			return ok(nil)
		}
		sub := s.subsystems[v.Subsystem]
		for _, l := range sub.Listeners {
			if l.InstanceID.Int() == body.Nvmf.InstanceID {
				return ok(nil)
			}
		}
		sub.Listeners = append(sub.Listeners, api.Listener{TrType: "TCP", AdrFam: "IPv4", TrSvcID: "4420", TrAddrs: []string{addr},
			InstanceID: api.Flex(strconv.Itoa(body.Nvmf.InstanceID))})
		return ok(nil)
	})
	f.handle(mux, "POST "+P+"/subsystems/{n}", func(r *http.Request, s *fakeSub) reply {
		n := r.PathValue("n")
		if s.subsystems[n] != nil {
			return fail(409, "subsystem %s already exists", n)
		}
		s.subsystems[n] = &api.Subsystem{Name: n, NQN: "nqn.2023-03.com.ddn:red:clu1:red:" + r.PathValue("s") + ":" + n, Hosts: []string{}}
		return reply{201, "Created", s.subsystems[n]}
	})
	f.handle(mux, "GET "+P+"/subsystems/{n}", func(r *http.Request, s *fakeSub) reply {
		sub := s.subsystems[r.PathValue("n")]
		if sub == nil {
			return fail(404, "subsystem %s not found", r.PathValue("n"))
		}
		return ok(sub)
	})
	f.handle(mux, "DELETE "+P+"/subsystems/{n}", func(r *http.Request, s *fakeSub) reply {
		sub := s.subsystems[r.PathValue("n")]
		if sub == nil {
			return fail(404, "subsystem not found")
		}
		if len(sub.Namespaces) > 0 && r.URL.Query().Get("force") != "true" {
			return fail(409, "subsystem has namespaces")
		}
		delete(s.subsystems, sub.Name)
		return ok(nil)
	})
	f.handle(mux, "GET "+P+"/list", func(_ *http.Request, s *fakeSub) reply {
		var all []api.Subsystem
		for _, sub := range s.subsystems {
			all = append(all, *sub)
		}
		return ok(map[string]any{"targets": []any{map[string]any{"subsystems": all}}})
	})
	f.handle(mux, "GET "+P+"/subsystems/{n}/hosts", func(r *http.Request, s *fakeSub) reply {
		sub := s.subsystems[r.PathValue("n")]
		if sub == nil {
			return fail(404, "subsystem not found")
		}
		return ok(sub.Hosts)
	})
	f.handle(mux, "POST "+P+"/subsystems/{n}/hosts", func(r *http.Request, s *fakeSub) reply {
		sub := s.subsystems[r.PathValue("n")]
		if sub == nil {
			return fail(404, "subsystem not found")
		}
		var body struct {
			NQN string `json:"host_nqn"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		for _, h := range sub.Hosts {
			if h == body.NQN {
				return fail(409, "host %s already added", h)
			}
		}
		sub.Hosts = append(sub.Hosts, body.NQN)
		return reply{201, "Created", nil}
	})
	f.handle(mux, "DELETE "+P+"/subsystems/{n}/hosts/{h}", func(r *http.Request, s *fakeSub) reply {
		sub := s.subsystems[r.PathValue("n")]
		if sub == nil {
			return fail(404, "subsystem not found")
		}
		for i, h := range sub.Hosts {
			if h == r.PathValue("h") {
				sub.Hosts = append(sub.Hosts[:i], sub.Hosts[i+1:]...)
				return ok(nil)
			}
		}
		return fail(404, "host not found")
	})
	f.handle(mux, "GET /redapi/v1/clusters/{c}/capacity_percent", func(*http.Request, *fakeSub) reply {
		return ok(f.capacity)
	})
}

func (f *fakeInfinia) vol(r *http.Request, s *fakeSub) *api.Volume {
	ds := s.datasets[r.PathValue("d")]
	if ds == nil {
		return nil
	}
	return ds.volumes[r.PathValue("v")]
}

// volumeNames lists a dataset's volumes (sorted).
func (f *fakeInfinia) volumeNames(sub, ds string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.subs[sub].datasets[ds].volumes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (f *fakeInfinia) subsystem(sub, name string) *api.Subsystem {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.subs[sub].subsystems[name]
	if s == nil {
		return nil
	}
	c := *s
	c.Hosts = append([]string(nil), s.Hosts...)
	return &c
}

// setQuota sets the quota of red/csiService's dataset.
func (f *fakeInfinia) setQuota(q int64) {
	f.mu.Lock()
	f.subs["red"].datasets["csiService"].quota = q
	f.mu.Unlock()
}
