package storage

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// TestHandlersSurviveJunk calls every method with malformed parameters:
// each must answer (with an error or a result) without panicking, and
// leave the existing datasets alone.
func TestHandlersSurviveJunk(t *testing.T) {
	junk := []string{`null`, `1`, `"x"`, `[]`, `{}`, `{"name":1}`, `[[1,2]]`, `{"path":"/mnt/../etc"}`,
		`{"dataset":"tank","name":"@"}`, `{"snapshots":{"snapshots":[1,{"start":2}]},"name":"tank"}`,
		`{"source_datasets":[1],"target_dataset":"","direction":"PUSH","transport":"LOCAL","recursive":true,"retention_policy":"NONE","name_regex":".*"}`}
	for _, v := range versions {
		e := newEnv(t, v)
		e.mkfs("tank/a", nil)
		for _, name := range e.r.Names() {
			m, _ := e.r.Lookup(name)
			for _, j := range junk {
				for n := 0; n <= len(m.Params)+1; n++ {
					params := make([]json.RawMessage, n)
					for i := range params {
						params[i] = json.RawMessage(j)
					}
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Errorf("%s %s(%d × %s) panicked: %v", v, name, n, j, r)
							}
						}()
						_, _ = m.Handler(&middleware.Call{Ctx: context.Background(), Version: e.v}, params)
					}()
				}
			}
		}
		if !e.m.Exists("tank/a") || !e.m.Exists("tank") {
			t.Errorf("%s: junk calls destroyed datasets", v)
		}
	}
}
