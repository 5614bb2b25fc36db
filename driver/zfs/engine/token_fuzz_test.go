package engine

import (
	"sort"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FuzzPageToken: a token the engine issues ("after:<id>") reads back as
// its id; any other text is ABORTED or the first page, never a panic; a
// page lies within the list, is at most max_entries long, and its next
// token continues right after it.
func FuzzPageToken(f *testing.F) {
	f.Add("after:pvc-1", "pvc-0,pvc-1,pvc-2", int32(1))
	f.Add("", "a,b,c", int32(0))
	f.Add("after:", "a", int32(5))
	f.Add("before:x", "", int32(-1))
	f.Fuzz(func(t *testing.T, tok, list string, maxEntries int32) {
		after, err := parseToken(tok)
		if err != nil {
			if status.Code(err) != codes.Aborted {
				t.Fatalf("parseToken(%q) = %v; want ABORTED", tok, err)
			}
			return
		}
		if tok != "" && tokenPrefix+after != tok {
			t.Fatalf("parseToken(%q) = %q", tok, after)
		}
		keys := strings.Split(list, ",")
		sort.Strings(keys)
		if maxEntries < 0 {
			maxEntries = 0
		}
		from, to, next := page(len(keys), func(i int) string { return keys[i] }, after, maxEntries)
		if from < 0 || to < from || to > len(keys) || (maxEntries > 0 && to-from > int(maxEntries)) {
			t.Fatalf("page(%q after %q, maxEntries %d) = [%d, %d)", keys, after, maxEntries, from, to)
		}
		for _, k := range keys[from:to] {
			if k <= after {
				t.Fatalf("page after %q holds %q", after, k)
			}
		}
		if next == "" {
			if to != len(keys) {
				t.Fatalf("page ends at %d of %d without a next token", to, len(keys))
			}
			return
		}
		if a, err := parseToken(next); err != nil || a != keys[to-1] {
			t.Fatalf("next token %q reads as %q, %v; want %q", next, a, err, keys[to-1])
		}
	})
}
