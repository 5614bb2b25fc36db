package infinia

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FuzzPageToken: decodeToken(encodeToken(h)) == h for any position whose
// parts hold no NUL; arbitrary text is a token or ABORTED, never a panic,
// and a token that decodes re-encodes to one that decodes the same.
func FuzzPageToken(f *testing.F) {
	f.Add("clu1/red", "red", "csiService", "pvc-1", encodeToken(handle{"a", "b", "c", "d"}))
	f.Add("", "", "", "", "aTEAYQBiAGMAZA")
	f.Add("a\x00b", "s", "v", "x", "!!")
	f.Fuzz(func(t *testing.T, acct, sub, svc, vol, raw string) {
		if h, err := decodeToken(raw); err != nil {
			if status.Code(err) != codes.Aborted {
				t.Fatalf("decodeToken(%q) = %v; want ABORTED", raw, err)
			}
		} else if h2, err := decodeToken(encodeToken(h)); err != nil || h2 != h {
			t.Fatalf("%+v re-encoded decodes as %+v, %v", h, h2, err)
		}
		h := handle{account: acct, subtenant: sub, service: svc, volume: vol}
		if strings.Contains(acct+sub+svc+vol, "\x00") {
			return
		}
		if got, err := decodeToken(encodeToken(h)); err != nil || got != h {
			t.Fatalf("decodeToken(encodeToken(%+v)) = %+v, %v", h, got, err)
		}
	})
}
