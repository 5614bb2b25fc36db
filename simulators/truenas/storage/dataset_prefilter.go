package storage

import (
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Building a dataset's row reads the model (zfsmodel.Get measures the
// dataset's data on disk), so a query that lists every dataset to keep a
// few cost a walk of each: the driver's listings ("id = root OR id ^
// root/") made the simulator, not the driver, the bottleneck of
// BenchmarkTrueNASCreateDelete (issue 16). Filters that only compare the
// name are decided from the name first; the full filter still runs on the
// rows built (datasetQuery), so the answer is the same.

// nameOnly reports whether every term of filters (through OR) compares
// "id" or "name", the fields a dataset's name alone decides.
func nameOnly(filters []any) bool {
	for _, f := range filters {
		l, ok := f.([]any)
		if !ok {
			return false
		}
		if len(l) == 2 {
			if op, _ := l[0].(string); op == "OR" {
				alts, ok := l[1].([]any)
				if !ok {
					return false
				}
				for _, a := range alts {
					al, ok := a.([]any)
					if !ok || len(al) == 0 {
						return false
					}
					if _, nested := al[0].([]any); nested {
						if !nameOnly(al) {
							return false
						}
					} else if !nameOnly([]any{a}) {
						return false
					}
				}
				continue
			}
		}
		if len(l) != 3 || (l[0] != "id" && l[0] != "name") {
			return false
		}
	}
	return true
}

// namesMatching keeps the names whose {"id", "name"} stub passes filters
// (already validated by ParseQuery).
func namesMatching(names []string, filters []any) []string {
	stubs := make([]middleware.Row, len(names))
	for i, n := range names {
		stubs[i] = middleware.Row{"id": n, "name": n}
	}
	got, err := middleware.Query(stubs, filters, middleware.QueryOptions{})
	rows, ok := got.([]middleware.Row)
	if err != nil || !ok {
		return names // decided on the full rows instead
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r["id"].(string)
	}
	return out
}

// The driver's listing of a volume ("id = R OR id ^ R/") let through only
// R's subtree, but the query listed and matched every dataset of the pool
// to find it: a cost per call that grew with the number of volumes. A
// filter of "=" and "^" terms on the name bounds the names it can pass to
// one dataset's subtree; listing that subtree gives the same names in the
// same order (zfsmodel sorts a listing by name), and namesMatching still
// decides each.

// existingRoot is the dataset whose subtree holds every name filters (all
// name-only) can let through, or its nearest existing ancestor; "" for
// every pool.
func (s *service) existingRoot(filters []any) string {
	root, ok := andRoot(filters)
	if !ok {
		return ""
	}
	root, _, _ = strings.Cut(root, "@")
	for root != "" && !s.m.Exists(root) {
		root = parentName(root)
	}
	return root
}

// andRoot bounds terms that must all hold: any term that narrows bounds
// them all; the deepest is kept.
func andRoot(terms []any) (string, bool) {
	best, found := "", false
	for _, t := range terms {
		if r, ok := termRoot(t); ok && (!found || len(r) > len(best)) {
			best, found = r, true
		}
	}
	return best, found
}

// termRoot bounds one term: "= N" by N, "^ P" by the dataset part of P
// before its last "/", an OR by the common ancestor of its alternatives.
func termRoot(t any) (string, bool) {
	l, ok := t.([]any)
	if !ok {
		return "", false
	}
	if len(l) == 2 && l[0] == "OR" {
		alts, ok := l[1].([]any)
		if !ok || len(alts) == 0 {
			return "", false
		}
		var root string
		for i, a := range alts {
			al, ok := a.([]any)
			if !ok || len(al) == 0 {
				return "", false
			}
			var r string
			if _, nested := al[0].([]any); nested {
				r, ok = andRoot(al)
			} else {
				r, ok = termRoot(a)
			}
			if !ok {
				return "", false
			}
			if i == 0 {
				root = r
			} else {
				root = commonAncestor(root, r)
			}
		}
		return root, true
	}
	if len(l) != 3 || (l[0] != "id" && l[0] != "name") {
		return "", false
	}
	v, ok := l[2].(string)
	if !ok {
		return "", false
	}
	switch l[1] {
	case "=":
		return v, true
	case "^":
		i := strings.LastIndexByte(v, '/')
		if i < 0 {
			return "", false
		}
		return v[:i], true
	}
	return "", false
}

// commonAncestor is the longest dataset name both names are in (or are);
// "" when they share no pool.
func commonAncestor(a, b string) string {
	for a != "" && !(b == a || strings.HasPrefix(b, a+"/")) {
		a = parentName(a)
	}
	return a
}

// parentName is name's parent dataset, "" for a pool.
func parentName(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}
