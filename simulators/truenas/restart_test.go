package truenas

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// TestRestartMidCall: Restart drops the connection of a call in flight,
// cancels the call, forgets jobs (ids restart at 1), and keeps the model
// and the registered methods.
func TestRestartMidCall(t *testing.T) {
	s := startServer(t, "25.10")
	jobMethods(s.Registry(), make(chan struct{}, 1))
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	s.Registry().Add(middleware.Method{Name: "test.hang", Handler: func(c *middleware.Call, _ []json.RawMessage) (any, error) {
		close(started)
		<-c.Ctx.Done()
		cancelled <- c.Ctx.Err()
		return nil, c.Ctx.Err()
	}})
	if err := s.Model().Create("tank/kept", zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := dialRPC(t, s)
	c.login()
	var id int
	c.result("test.job.ok", &id, 1)
	if id != 1 {
		t.Fatalf("job id %d", id)
	}
	c.send("7", "test.hang")
	<-started
	s.Restart()
	if !c.closed(waitTimeout) {
		t.Fatal("Restart did not drop the connection")
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("in-flight call saw %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the in-flight call was not cancelled")
	}
	c2 := dialRPC(t, s)
	if a := c2.call("system.info"); a.Error == nil || a.Error.Data["errname"] != "ENOTAUTHENTICATED" {
		t.Errorf("a new connection after Restart must log in again: %+v", a.Error)
	}
	c2.login()
	var rows []map[string]any
	c2.result("core.get_jobs", &rows)
	if len(rows) != 0 {
		t.Errorf("jobs survived the restart: %v", rows)
	}
	c2.result("test.job.ok", &id, 2)
	if id != 1 {
		t.Errorf("first job after restart has id %d, want 1", id)
	}
	if _, err := s.Model().Get("tank/kept"); err != nil {
		t.Errorf("the model lost tank/kept: %v", err)
	}
	if st := s.Stats(); st.Restarts != 1 {
		t.Errorf("Restarts = %d", st.Restarts)
	}
}
