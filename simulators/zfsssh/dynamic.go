package zfsssh

import (
	"path"
	"strings"
)

// syncDynamic makes the in-memory tree below Options.DynamicRoot what
// Options.Dynamic says exists now (see Options.Dynamic).
func (s *Server) syncDynamic() {
	if s.dynamic == nil || s.dynamicRoot == "" {
		return
	}
	want := s.dynamic()
	keep := map[string]bool{}
	for p := range want {
		p = strings.TrimSuffix(p, "/")
		for _, a := range ancestors(path.Clean(p), true) {
			keep[a] = true
		}
	}
	root := path.Clean(s.dynamicRoot)
	v := s.fs
	v.mu.Lock()
	for p := range v.mem {
		if (p == root || strings.HasPrefix(p, root+"/")) && !keep[p] {
			delete(v.mem, p)
		}
	}
	v.mu.Unlock()
	if len(want) == 0 {
		return
	}
	v.ensureDir(root, 0o755, 0)
	for p, content := range want {
		if strings.HasSuffix(p, "/") { // a directory that exists even when empty
			v.ensureDir(path.Clean(p), 0o755, 0)
			continue
		}
		p = path.Clean(p)
		if !strings.HasPrefix(p, root+"/") {
			continue
		}
		if _, err := v.stat(p); err != nil {
			v.putFile(p, []byte(content), 0o644)
		}
	}
}
