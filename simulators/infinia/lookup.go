package infinia

// Lookups of the objects a path names, with the 404 each answers. They
// run with s.mu held.

func (s *Server) findCluster(rq *request) (*cluster, *apiError) {
	cl := s.st.Clusters[rq.p("c")]
	if cl == nil {
		return nil, errorf(404, "cluster %s not found", rq.p("c"))
	}
	return cl, nil
}

func (s *Server) findTenant(rq *request) (*cluster, *tenant, *apiError) {
	cl, e := s.findCluster(rq)
	if e != nil {
		return nil, nil, e
	}
	tn := cl.Tenants[rq.p("t")]
	if tn == nil {
		return nil, nil, errorf(404, "tenant %s/%s not found", rq.p("c"), rq.p("t"))
	}
	return cl, tn, nil
}

// where is the subtenant and its parents of a request.
type where struct {
	cl  *cluster
	tn  *tenant
	sub *subtenant
}

func (s *Server) findSubtenant(rq *request) (where, *apiError) {
	cl, tn, e := s.findTenant(rq)
	if e != nil {
		return where{}, e
	}
	sub := tn.Subtenants[rq.p("s")]
	if sub == nil {
		return where{}, errorf(404, "subtenant %s/%s not found", rq.p("t"), rq.p("s"))
	}
	return where{cl, tn, sub}, nil
}

func (s *Server) findDataset(rq *request) (where, *dataset, *apiError) {
	w, e := s.findSubtenant(rq)
	if e != nil {
		return w, nil, e
	}
	ds := w.sub.Datasets[rq.p("d")]
	if ds == nil {
		return w, nil, errorf(404, "dataset %s/%s not found", rq.p("s"), rq.p("d"))
	}
	return w, ds, nil
}

func (s *Server) findVolume(rq *request) (where, *dataset, *volume, *apiError) {
	w, ds, e := s.findDataset(rq)
	if e != nil {
		return w, nil, nil, e
	}
	v := ds.Volumes[rq.p("v")]
	if v == nil {
		return w, ds, nil, errVolumeNotFound(rq, rq.p("v"))
	}
	return w, ds, v, nil
}

func errVolumeNotFound(rq *request, name string) *apiError {
	return errorf(404, "volume %s/%s/%s not found", rq.p("s"), rq.p("d"), name)
}

func (s *Server) findSubsystem(rq *request, name string) (where, *subsystem, *apiError) {
	w, e := s.findSubtenant(rq)
	if e != nil {
		return w, nil, e
	}
	ss := w.sub.Subsystems[name]
	if ss == nil {
		return w, nil, errorf(404, "subsystem %s/%s not found", rq.p("s"), name)
	}
	return w, ss, nil
}
