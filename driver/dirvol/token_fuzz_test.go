package dirvol

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FuzzPageToken: a token reads back only as a safe directory name (never
// "..", "/" or NUL, so it cannot leave the volumes folder); a page is at
// most maxEntries long and its next token starts the following page.
func FuzzPageToken(f *testing.F) {
	f.Add("from:pvc-2", "pvc-1,pvc-2,pvc-3", int32(1))
	f.Add("from:..", "a", int32(0))
	f.Add("from:a/b", "", int32(2))
	f.Add("", "b,a", int32(1))
	f.Fuzz(func(t *testing.T, tok, list string, maxEntries int32) {
		start, err := parseToken("ListVolumes", tok)
		if err != nil {
			if status.Code(err) != codes.Aborted {
				t.Fatalf("parseToken(%q) = %v; want ABORTED", tok, err)
			}
			return
		}
		if tok != "" && (!safeComponent(start) || tokenPrefix+start != tok) {
			t.Fatalf("parseToken(%q) = %q", tok, start)
		}
		names := strings.Split(list, ",")
		sort.Strings(names)
		names = slices.Compact(names) // directory names are unique
		if maxEntries < 0 {
			maxEntries = 0
		}
		pg, next := paginate(names, start, maxEntries)
		if maxEntries > 0 && len(pg) > int(maxEntries) {
			t.Fatalf("page of %d for maxEntries %d", len(pg), maxEntries)
		}
		for _, n := range pg {
			if n < start {
				t.Fatalf("page from %q holds %q", start, n)
			}
		}
		if next != "" {
			if !safeComponent(strings.TrimPrefix(next, tokenPrefix)) {
				return // the name itself is not a directory name; never listed
			}
			if len(pg) == 0 {
				t.Fatalf("empty page with next token %q", next)
			}
			n, err := parseToken("ListVolumes", next)
			if err != nil || n <= pg[len(pg)-1] {
				t.Fatalf("next token %q after page %q: %q, %v", next, pg, n, err)
			}
		}
	})
}
