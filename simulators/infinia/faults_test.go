package infinia

import (
	"testing"
	"time"
)

// TestFaultErrorRate: an op with error rate 1 answers 503 "injected
// fault" without running; other ops are unaffected; Reset heals.
func TestFaultErrorRate(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/v", nil).must(t, 201)
	s.Faults().SetErrorRate("volume.create", 1)
	a := c.call("POST", pathD+"/volumes", volBody("v", 1, "v")).must(t, 503)
	if a.Title != "injected fault" {
		t.Errorf("title %q", a.Title)
	}
	c.call("GET", pathD+"/volumes/v", nil).must(t, 404)
	s.Faults().SetErrorRate("login", 1)
	newClient(t, s).login(DefaultUser, DefaultPassword, "clu1/red").must(t, 503)
	s.Faults().Reset()
	c.call("POST", pathD+"/volumes", volBody("v", 1, "v")).must(t, 201)
	if st := s.Stats(); st.InjectedErrors != 2 || st.Statuses[503] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestFaultLatency: a delayed op takes at least its latency; others do
// not wait.
func TestFaultLatency(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	s.Faults().SetLatency("dataset.get", 300*time.Millisecond)
	start := time.Now()
	c.call("GET", pathD, nil).must(t, 200)
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("delayed call took %v", d)
	}
	// Close does not wait out a long delay.
	s.Faults().SetLatency("", time.Hour)
	done := make(chan struct{})
	go func() {
		c.try("GET", pathP, nil, map[string]string{"Authorization": "Bearer " + c.token})
		close(done)
	}()
	time.Sleep(100 * time.Millisecond)
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the injected latency")
	}
	<-done
}

// TestFaultDropAfter: the n-th call runs but its connection is closed
// without an answer; the client sees a transport error.
func TestFaultDropAfter(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/v", nil).must(t, 201)
	s.Faults().DropAfter(2)
	c.call("GET", pathP, nil).must(t, 200)
	_, err := c.try("POST", pathD+"/volumes", volBody("v", 1, "v"), map[string]string{"Authorization": "Bearer " + c.token})
	if err == nil {
		t.Fatal("the dropped call got an answer")
	}
	// It took effect, and the next call is answered.
	c.call("GET", pathD+"/volumes/v", nil).must(t, 200)
	if st := s.Stats(); st.Dropped != 1 {
		t.Errorf("dropped %d", st.Dropped)
	}
}

// TestRestartDropsConnections: Restart closes idle keep-alive
// connections; the client reconnects (a new TCP connection and TLS
// handshake) and must log in again.
func TestRestartDropsConnections(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("GET", pathP, nil).must(t, 200)
	before := s.Stats()
	s.Restart()
	c.call("GET", pathP, nil).must(t, 401)
	c.login(DefaultUser, DefaultPassword, "clu1/red").must(t, 200)
	c.call("GET", pathP, nil).must(t, 200)
	after := s.Stats()
	if after.Connections != before.Connections+1 || after.TLSHandshakes != before.TLSHandshakes+1 || after.Restarts != 1 {
		t.Errorf("before %+v after %+v", before, after)
	}
}
