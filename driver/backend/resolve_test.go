package backend

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

func init() {
	Register(Type{Name: "resolve-test", Aliases: []string{"resolve-alias-test"}, Validate: func(t config.Tree) []config.Problem {
		if _, ok := t.String("rt.path"); !ok {
			return []config.Problem{{Key: "rt.path", Msg: "required"}}
		}
		return nil
	}})
}

func TestResolve(t *testing.T) {
	// The full build registers every real planned type (this test binary
	// links them all through fuzz_test.go), so one stands in here.
	saved := planned
	planned = append(slices.Clone(planned), "resolve-planned")
	t.Cleanup(func() { planned = saved })
	tests := []struct {
		yaml  string
		kind  Failure
		typ   string // the type returned, "" for none
		words []string
	}{
		{"driver: resolve-test\nrt: {path: /x}\n", 0, "resolve-test", nil},
		{"driver: resolve-alias-test\nrt: {path: /x}\n", 0, "resolve-test", nil},
		{"rt: {path: /x}\n", MissingDriver, "", []string{"f.yaml: driver: required"}},
		{"driver: proxy\n", ProxyIncompatible, "", []string{"f.yaml: driver: proxy cannot be used behind the proxy"}},
		{"driver: objectivefs\n", ProxyIncompatible, "", []string{"objectivefs cannot be used", "node calls never see"}},
		{"driver: zfs-local-ephemeral-inline\n", ProxyIncompatible, "", []string{"zfs-local-ephemeral-inline cannot be used", "zfs-local-dataset"}},
		{"driver: resolve-planned\n", NotInThisBuild, "", []string{"resolve-planned is not available in this build of switchyard yet", "resolve-test"}},
		{"driver: teleport\n", UnknownDriver, "", []string{`unknown driver "teleport"; known: `, "resolve-test"}},
		{"driver: resolve-tset\n", UnknownDriver, "", []string{`did you mean "resolve-test"?`}},
		{"driver: nfs-clinet\n", UnknownDriver, "", []string{`did you mean "nfs-client"?`}},
		{"driver: resolve-test\n", Invalid, "resolve-test", []string{"f.yaml: rt.path: required"}},
	}
	for _, tt := range tests {
		tree, err := config.Parse([]byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		typ, err := Resolve(tree, "f.yaml")
		if FailureOf(err) != tt.kind || (typ == nil) != (tt.typ == "") || (typ != nil && typ.Name != tt.typ) {
			t.Errorf("%q: Resolve = %v, %v (kind %d); want type %q, kind %d", tt.yaml, typ, err, FailureOf(err), tt.typ, tt.kind)
			continue
		}
		for _, w := range tt.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %q does not mention %q", tt.yaml, err, w)
			}
		}
		var ps config.Problems
		if err != nil && (!errors.As(err, &ps) || len(ps) == 0 || ps[0].File != "f.yaml") {
			t.Errorf("%q: %v does not unwrap to problems naming the file", tt.yaml, err)
		}
	}
	if d := suggest("teleport"); d != "" {
		t.Errorf("suggest(teleport) = %q; want none", d)
	}
}
