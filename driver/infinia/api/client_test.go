package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLoginOnceThenReuseToken(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	c := newClient(t, f.config(f.start()))
	for range 3 {
		s, err := c.GetService(context.Background(), "red", "csiService")
		if err != nil {
			t.Fatal(err)
		}
		if s.DatasetName() != "csiService" || len(s.Instances) != 2 {
			t.Fatalf("service decoded as %+v", s)
		}
	}
	if st := c.Stats(); st.Logins != 1 || st.Requests != 4 {
		t.Fatalf("stats %+v, want 1 login and 4 requests", st)
	}
	if f.logins.Load() != 1 {
		t.Fatalf("server saw %d logins", f.logins.Load())
	}
}

func TestReloginOn401AndRetryOnce(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	c := newClient(t, f.config(f.start()))
	ctx := context.Background()
	if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
		t.Fatal(err)
	}
	f.expireAll()
	if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if st := c.Stats(); st.Logins != 2 {
		t.Fatalf("logins %d, want 2 (one re-login after the 401)", st.Logins)
	}
}

func TestPersistent401IsNotRetriedForever(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, func(*http.Request) (int, string, any) { return 401, "token lacks rights", nil })
	c := newClient(t, f.config(f.start()))
	_, err := c.GetService(context.Background(), "red", "csiService")
	if StatusCode(err) != http.StatusUnauthorized {
		t.Fatalf("want a 401 error, got %v", err)
	}
	// login, call, re-login, call again: then give up.
	if got := f.requests.Load(); got != 4 {
		t.Fatalf("server saw %d requests, want 4", got)
	}
}

func TestConcurrentCallsShareOneLogin(t *testing.T) {
	f := newFakeAPI(t)
	f.loginDelay = 100 * time.Millisecond
	f.route(servicePath, okService)
	c := newClient(t, f.config(f.start()))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			_, err := c.GetService(context.Background(), "red", "csiService")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.logins.Load(); n != 1 {
		t.Fatalf("server saw %d logins for 20 concurrent calls, want 1", n)
	}
}

func TestRefusedLoginIsHeld(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	cfg := f.config(f.start())
	cfg.Password = "wrong-password"
	c := newClient(t, cfg)
	for range 5 {
		_, err := c.GetService(context.Background(), "red", "csiService")
		var se *StatusError
		if !errors.As(err, &se) || se.Code != 401 || !strings.Contains(se.Path, "auth_user") {
			t.Fatalf("want the login's 401, got %v", err)
		}
	}
	if n := f.logins.Load(); n != 1 {
		t.Fatalf("server saw %d logins; a refused login should be held for a while", n)
	}
}

func TestFailoverToSecondEndpointAndStay(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	dead, live := deadEndpoint(t), f.start()
	c := newClient(t, f.config(dead, live))
	ctx := context.Background()
	if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != live {
		t.Fatalf("endpoint %s, want %s after failover", c.Endpoint(), live)
	}
	before := c.Stats().Requests
	if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
		t.Fatal(err)
	}
	if d := c.Stats().Requests - before; d != 1 {
		t.Fatalf("second call sent %d requests; it should go straight to the working endpoint", d)
	}
	if c.Stats().Failovers != 1 {
		t.Fatalf("failovers %d, want 1", c.Stats().Failovers)
	}
}

func TestFailoverOn503(t *testing.T) {
	busy := newFakeAPI(t)
	busy.route(servicePath, func(*http.Request) (int, string, any) { return 503, "injected fault", nil })
	good := newFakeAPI(t)
	good.route(servicePath, okService)
	c := newClient(t, good.config(busy.start(), good.start()))
	if _, err := c.GetService(context.Background(), "red", "csiService"); err != nil {
		t.Fatal(err)
	}
}

func TestEveryEndpointDown(t *testing.T) {
	a, b := deadEndpoint(t), deadEndpoint(t)
	f := newFakeAPI(t)
	c := newClient(t, f.config(a, b))
	_, err := c.GetService(context.Background(), "red", "csiService")
	if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTLS) {
		t.Fatalf("want ErrUnreachable, got %v", err)
	}
	for _, ep := range []string{a, b} {
		if !strings.Contains(err.Error(), ep) {
			t.Errorf("error does not name %s: %v", ep, err)
		}
	}
}

func TestStatusErrorCarriesTitle(t *testing.T) {
	f := newFakeAPI(t)
	f.route("GET /redapi/v1/clusters/clu1/tenants/red/subtenants/red/datasets/csiService/volumes/vol1",
		func(*http.Request) (int, string, any) { return 404, "volume red/csiService/vol1 not found", nil })
	c := newClient(t, f.config(f.start()))
	v, err := c.GetVolume(context.Background(), "red", "csiService", "vol1")
	if v != nil || !IsNotFound(err) || IsConflict(err) {
		t.Fatalf("want a 404 and no volume, got %v %v", v, err)
	}
	if !strings.Contains(err.Error(), "volume red/csiService/vol1 not found") {
		t.Fatalf("error lacks the server's title: %v", err)
	}
}

func TestNamesAreEscapedAndPagingHeadersSent(t *testing.T) {
	f := newFakeAPI(t)
	var limit, from string
	f.route("GET /redapi/v1/clusters/clu1/tenants/red/subtenants/red/datasets/a%2Fb/volumes",
		func(r *http.Request) (int, string, any) {
			limit, from = r.Header.Get("limit"), r.Header.Get("from")
			return 200, "OK", []map[string]any{{"name": "v2", "nsid": 3, "block_size": 4096, "nblocks": 2}}
		})
	c := newClient(t, f.config(f.start()))
	vols, err := c.ListVolumes(context.Background(), "red", "a/b", 5, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if limit != "5" || from != "v1" {
		t.Fatalf("headers limit=%q from=%q", limit, from)
	}
	if len(vols) != 1 || vols[0].NSID.Int() != 3 || vols[0].Size() != 8192 {
		t.Fatalf("decoded %+v", vols)
	}
}

func TestNullDataIsAnError(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, func(*http.Request) (int, string, any) { return 200, "OK", nil })
	c := newClient(t, f.config(f.start()))
	if s, err := c.GetService(context.Background(), "red", "csiService"); err == nil {
		t.Fatalf("want an error for null data, got %+v", s)
	}
}

func TestDeadlineIsHonoured(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, func(r *http.Request) (int, string, any) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
		return okService(r)
	})
	c := newClient(t, f.config(f.start()))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetService(ctx, "red", "csiService")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("call took %s despite a 300ms deadline", time.Since(start))
	}
}

func TestTokenRefreshedBeforeItsLifetimeEnds(t *testing.T) {
	f := newFakeAPI(t)
	f.lifetime = time.Second
	f.route(servicePath, okService)
	c := newClient(t, f.config(f.start()))
	ctx := context.Background()
	if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(900 * time.Millisecond) // past 80% of the lifetime
	if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
		t.Fatal(err)
	}
	// login, call, login, call: the second login came before any 401.
	if st := c.Stats(); st.Logins != 2 || st.Requests != 4 {
		t.Fatalf("stats %+v, want 2 logins and 4 requests", st)
	}
}
