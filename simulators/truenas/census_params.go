package truenas

// alignParams names every served method's parameters as the release does
// (its census, derived from the middleware's source): the names are what
// core.get_methods shows and what REST bodies of methods with several
// parameters are keyed by. A method whose parameter count differs from
// the release's keeps its own names; TestCensusMethods reports it.
func (s *Server) alignParams() {
	if s.census == nil {
		return
	}
	for _, name := range s.reg.Names() {
		m, _ := s.reg.Lookup(name)
		want, ok := s.census.Methods[name]
		if !ok || len(want.Params) == 0 || len(want.Params) != len(m.Params) {
			continue
		}
		m.Params = append([]string(nil), want.Params...)
	}
}
