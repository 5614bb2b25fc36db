package infinia

import (
	"sync"
	"testing"
)

// TestStatsOnePool: a client that keeps one connection pool and one token
// shows up as one login, one TCP connection and one TLS handshake, with
// every call counted under its route.
func TestStatsOnePool(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.mkVolume("v", 1)
	for i := 0; i < 5; i++ {
		c.call("GET", pathD+"/volumes/v", nil).must(t, 200)
	}
	c.call("GET", pathD+"/volumes/nope", nil).must(t, 404)
	st := s.Stats()
	want := map[string]int64{"GET /auth_user": 1, "POST /subsystems/{name}": 1, "POST /volumes": 1, "GET /volumes/{v}": 6}
	for k, v := range want {
		if st.Requests[k] != v {
			t.Errorf("Requests[%q] = %d, want %d (all: %v)", k, st.Requests[k], v, st.Requests)
		}
	}
	if st.Total() != 9 || st.Logins != 1 || st.Connections != 1 || st.TLSHandshakes != 1 || st.Statuses[200] != 6 || st.Statuses[201] != 2 || st.Statuses[404] != 1 {
		t.Errorf("stats %+v", st)
	}
	s.ResetStats()
	if st := s.Stats(); st.Total() != 0 || st.Logins != 0 || st.Connections != 0 || len(st.Statuses) != 0 {
		t.Errorf("after ResetStats: %+v", st)
	}
}

// TestConcurrentCreates: parallel creations on one server all succeed
// with distinct ids, and each namespace id is used once.
func TestConcurrentCreates(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	c.call("POST", pathP+"/subsystems/shared", nil).must(t, 201)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := c.try("POST", pathD+"/volumes", volBody("v"+string(rune('a'+i)), 1, "shared"), map[string]string{"Authorization": "Bearer " + c.token})
			if err != nil || a.Status != 201 {
				errs <- a.Title
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("create failed: %s", e)
	}
	var ss subsystemJSON
	c.call("GET", pathP+"/subsystems/shared", nil).must(t, 200).decode(t, &ss)
	seen := map[int]bool{}
	for _, ns := range ss.Namespaces {
		if seen[ns.NSID] || ns.NSID < 1 || ns.NSID > n {
			t.Errorf("nsid %d", ns.NSID)
		}
		seen[ns.NSID] = true
	}
	if len(seen) != n {
		t.Errorf("%d namespaces", len(seen))
	}
}
