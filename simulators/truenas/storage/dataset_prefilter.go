package storage

import "github.com/switchyard-csi/switchyard/simulators/truenas/middleware"

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
