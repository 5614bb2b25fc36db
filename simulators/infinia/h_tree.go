package infinia

import "slices"

// Read-only routes of the tree: instances, capacity, tenants, subtenants,
// services, datasets.

func (s *Server) listInstances(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, e := s.findCluster(rq)
	if e != nil {
		return 0, nil, e
	}
	out := slices.Clone(cl.Instances)
	if out == nil {
		out = []Instance{}
	}
	return 200, out, nil
}

func (s *Server) capacity(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, e := s.findCluster(rq)
	if e != nil {
		return 0, nil, e
	}
	used := cl.usage()
	pct := 0.0
	if cl.Capacity > 0 {
		pct = float64(used) * 100 / float64(cl.Capacity)
	}
	return 200, map[string]any{"total": cl.Capacity, "used": used, "percent": pct}, nil
}

func (s *Server) getTenant(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, tn, e := s.findTenant(rq)
	if e != nil {
		return 0, nil, e
	}
	return 200, sizeJSON{Name: rq.p("t"), Quota: tn.Quota, Usage: tn.usage()}, nil
}

func (s *Server) listSubtenants(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, tn, e := s.findTenant(rq)
	if e != nil {
		return 0, nil, e
	}
	names, e := page(rq.r, sortedKeys(tn.Subtenants))
	if e != nil {
		return 0, nil, e
	}
	out := []sizeJSON{}
	for _, n := range names {
		sub := tn.Subtenants[n]
		out = append(out, sizeJSON{Name: n, Quota: sub.Quota, Usage: sub.usage()})
	}
	return 200, out, nil
}

func (s *Server) getSubtenant(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, e := s.findSubtenant(rq)
	if e != nil {
		return 0, nil, e
	}
	return 200, sizeJSON{Name: rq.p("s"), Quota: w.sub.Quota, Usage: w.sub.usage()}, nil
}

func (s *Server) listServices(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, e := s.findSubtenant(rq)
	if e != nil {
		return 0, nil, e
	}
	names, e := page(rq.r, sortedKeys(w.sub.Services))
	if e != nil {
		return 0, nil, e
	}
	out := []serviceJSON{}
	for _, n := range names {
		out = append(out, serviceOf(w.cl, n, w.sub.Services[n]))
	}
	return 200, out, nil
}

func (s *Server) getService(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, e := s.findSubtenant(rq)
	if e != nil {
		return 0, nil, e
	}
	sv := w.sub.Services[rq.p("svc")]
	if sv == nil {
		return 0, nil, errorf(404, "service %s/%s not found", rq.p("s"), rq.p("svc"))
	}
	return 200, serviceOf(w.cl, rq.p("svc"), sv), nil
}

func (s *Server) getDataset(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ds, e := s.findDataset(rq)
	if e != nil {
		return 0, nil, e
	}
	return 200, datasetJSON{Name: rq.p("d"), Type: "volume", Quota: ds.Quota, Usage: ds.usage()}, nil
}
