package truenas

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/census"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// callInProcess runs a method's handler as root, jobs included, and
// returns its error.
func callInProcess(s *Server, name string, params ...any) (any, error) {
	m, ok := s.Registry().Lookup(name)
	if !ok {
		return nil, errors.New("not served")
	}
	raw := make([]json.RawMessage, len(params))
	for i, p := range params {
		raw[i], _ = json.Marshal(p)
	}
	c := &middleware.Call{Ctx: context.Background(), Version: s.Version(), User: "root", Progress: func(float64, string) {}}
	if m.Validate != nil {
		if err := m.Validate(raw); err != nil {
			return nil, err
		}
	}
	return runHandler(m.Handler, c, raw)
}

// refusedAsUnknown reports whether err says field is not part of the
// argument ("Extra inputs are not permitted", "Field was not expected").
func refusedAsUnknown(err error, field string) bool {
	var v middleware.ValidationErrors
	if !errors.As(err, &v) {
		return false
	}
	for _, e := range v {
		if (e.Attribute == field || strings.HasSuffix(e.Attribute, "."+field)) &&
			(e.Message == "Extra inputs are not permitted" || e.Message == "Field was not expected") {
			return true
		}
	}
	return false
}

// idPlaceholder is a value of the right kind for a method's leading
// positional parameter i.
func idPlaceholder(method string, i int) any {
	if method == "service.control" && i == 0 {
		return "START"
	}
	if strings.HasPrefix(method, "service.") {
		return "nfs"
	}
	for _, p := range []string{"pool.dataset.", "pool.snapshot.", "zfs."} {
		if strings.HasPrefix(method, p) {
			return "tank"
		}
	}
	return 1
}

// TestCensusAcceptedFields: for every served method whose release
// describes its object argument (an API model from 25.04, the legacy
// schema's Dict before), every field of it is accepted by the simulator: a probe value for it may be refused
// for its type or value, never as an unknown field.
func TestCensusAcceptedFields(t *testing.T) {
	methods, fields := 0, 0
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			c, err := census.Load(v)
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, v)
			var gaps []string
			for _, name := range s.Registry().Names() {
				want, ok := c.Methods[name]
				if !ok || want.Fields == nil || strings.HasPrefix(name, "auth.") || strings.HasPrefix(name, "core.") {
					continue
				}
				methods++
				// and a field the model lacks is refused as unknown
				params := make([]any, want.FieldsParam+1)
				for i := range want.FieldsParam {
					params[i] = idPlaceholder(name, i)
				}
				params[want.FieldsParam] = map[string]any{"census_not_a_field": true}
				if _, err := callInProcess(s, name, params...); !refusedAsUnknown(err, "census_not_a_field") && knownFieldGaps[name+".*"] == "" {
					t.Errorf("%s: a field no model of %s has is accepted", name, c.Source.Tag)
				}
				for f := range want.Fields {
					fields++
					params := make([]any, want.FieldsParam+1)
					for i := range want.FieldsParam {
						params[i] = idPlaceholder(name, i)
					}
					params[want.FieldsParam] = map[string]any{f: map[string]any{"census-probe": []any{}}}
					_, err := callInProcess(s, name, params...)
					if refusedAsUnknown(err, f) {
						if why, known := knownFieldGaps[name+"."+f]; known && why != "" {
							continue
						}
						gaps = append(gaps, name+"."+f)
					}
				}
			}
			sort.Strings(gaps)
			for _, g := range gaps {
				t.Errorf("%s: %s accepts it (%s), the simulator refuses it as unknown", g, c.Source.Tag, c.Source.API)
			}
		})
	}
	t.Logf("%d method×release pairs, %d fields probed", methods, fields)
}

// knownFieldGaps are model fields the simulator does not accept yet, each
// with the reason it is left out.
var knownFieldGaps = map[string]string{
	"iscsi.global.sessions.*": "query options are parsed by the shared query code, which accepts unknown keys on every query",
}
