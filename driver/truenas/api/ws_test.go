package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentCallsOutOfOrder sends n calls at once; the server answers
// them in reverse order of arrival (each waits for all later ones), and
// every caller must get its own answer. Ten fit on one socket; a hundred
// take ten lanes, each its own connection and login.
func TestConcurrentCallsOutOfOrder(t *testing.T) {
	for _, tt := range []struct{ n, conns int }{{wsCallsPerConn, 1}, {100, 10}} {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) { testOutOfOrder(t, tt.n, tt.conns) })
	}
}

func testOutOfOrder(t *testing.T, n, conns int) {
	f := newFakeNAS(t, "25.10")
	var (
		mu      sync.Mutex
		arrived []chan struct{}
	)
	f.handle("test.slow", func(ctx context.Context, p []json.RawMessage) (any, error) {
		done := make(chan struct{})
		mu.Lock()
		arrived = append(arrived, done)
		i := len(arrived) - 1
		if len(arrived) == n {
			close(arrived[n-1])
		}
		mu.Unlock()
		<-done
		if i > 0 { // release the one that came before: answers go out last-first
			mu.Lock()
			close(arrived[i-1])
			mu.Unlock()
		}
		return p[0], nil
	})
	f.start()
	cfg := f.config()
	cfg.MaxConcurrentCalls = n
	c := newClient(t, cfg)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Call(ctxT(t), "test.slow", map[string]int{"i": i})
			if err != nil {
				errs <- err
				return
			}
			var got map[string]int
			if err := json.Unmarshal(res, &got); err != nil || got["i"] != i {
				errs <- fmt.Errorf("call %d got %s", i, res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := c.Stats()
	if st.Dials != conns || st.Logins != conns || st.Reconnects != 0 || st.Calls != n {
		t.Fatalf("stats %+v: want %d dials, %d logins, %d calls", st, conns, conns, n)
	}
	if got := f.accepted.Load(); got != int64(conns) {
		t.Fatalf("server accepted %d connections, want %d", got, conns)
	}
}

// TestTooManyCallsRetried: the server allows 3 calls in flight per socket
// and answers -32000 beyond that; the client (allowing 16) resends.
func TestTooManyCallsRetried(t *testing.T) {
	f := newFakeNAS(t, "25.04")
	f.maxInFlight = 3
	f.handle("test.sleep", func(ctx context.Context, p []json.RawMessage) (any, error) {
		time.Sleep(5 * time.Millisecond)
		return p[0], nil
	})
	f.start()
	c := newClient(t, f.config())
	var wg sync.WaitGroup
	var failed sync.Map
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Call(ctxT(t), "test.sleep", i); err != nil {
				failed.Store(i, err)
			}
		}()
	}
	wg.Wait()
	failed.Range(func(k, v any) bool { t.Errorf("call %v: %v", k, v); return true })
	if c.Stats().BusyRetries == 0 {
		t.Fatal("no call was refused with -32000: the test did not test retries")
	}
}

func TestReloginOnNotAuthenticated(t *testing.T) {
	f := newFakeNAS(t, "25.10").start()
	c := newClient(t, f.config())
	if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
		t.Fatal(err)
	}
	f.expireSessions()
	// Many calls find the session gone at once: one new login serves them all.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Call(ctxT(t), "test.echo", 2); err != nil {
				t.Errorf("after expiry: %v", err)
			}
		}()
	}
	wg.Wait()
	if st := c.Stats(); st.Logins != 2 || st.Dials != 1 {
		t.Fatalf("stats %+v: want 2 logins on 1 connection", st)
	}
}

func TestReconnectAfterDrop(t *testing.T) {
	f := newFakeNAS(t, "25.10")
	entered := make(chan struct{})
	f.handle("test.hang", func(ctx context.Context, p []json.RawMessage) (any, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	f.start()
	c := newClient(t, f.config())
	if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctxT(t), "test.hang")
		errc <- err
	}()
	<-entered
	f.dropAll()
	err := <-errc
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "test.hang") || !strings.Contains(err.Error(), "may have taken effect") {
		t.Fatalf("in-flight call: %v, want ErrConnectionLost naming the method", err)
	}
	// The next call redials and logs in again.
	waitFor(t, func() bool { return f.openConns() == 0 })
	res, err := c.Call(ctxT(t), "test.echo", 2)
	if err != nil || string(res) != "2" {
		t.Fatalf("after drop: %s, %v", res, err)
	}
	if st := c.Stats(); st.Reconnects != 1 || st.Dials != 2 || st.Logins != 2 {
		t.Fatalf("stats %+v: want 1 reconnect, 2 dials, 2 logins", st)
	}
	// 25.10: the new connection turned legacy jobs off again.
	if n := f.countMethod("core.set_options"); n != 2 {
		t.Fatalf("core.set_options called %d times, want once per connection", n)
	}
}

func TestDropWhileIdleIsInvisible(t *testing.T) {
	f := newFakeNAS(t, "25.04").start()
	c := newClient(t, f.config())
	if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
		t.Fatal(err)
	}
	f.dropAll()
	// The reader notices the close; the next call, never sent on the dead
	// connection, goes out on a new one without an error.
	waitFor(t, func() bool {
		c.ws.lanes[0].mu.Lock()
		defer c.ws.lanes[0].mu.Unlock()
		return c.ws.lanes[0].cur != nil && !c.ws.lanes[0].cur.alive()
	})
	if _, err := c.Call(ctxT(t), "test.echo", 2); err != nil {
		t.Fatalf("call after an idle drop: %v", err)
	}
	if st := c.Stats(); st.Reconnects != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLoginMechanisms(t *testing.T) {
	tests := []struct {
		name    string
		loginEx bool
		apiKey  bool
		user    string
		want    []string // auth methods the server saw, in order
	}{
		{"password login_ex", true, false, "root", []string{"auth.login_ex"}},
		{"key login_ex", true, true, "root", []string{"auth.login_ex"}},
		{"key without user", true, true, "", []string{"auth.login_with_api_key"}},
		{"password legacy", false, false, "root", []string{"auth.login_ex", "auth.login"}},
		{"key legacy", false, true, "root", []string{"auth.login_ex", "auth.login_with_api_key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeNAS(t, "25.04")
			f.loginEx = tt.loginEx
			f.start()
			cfg := f.config()
			if tt.apiKey {
				cfg = f.keyConfig()
				cfg.AllowPlaintextAPIKey = true
			}
			cfg.Username = tt.user
			c := newClient(t, cfg)
			if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range f.methods() {
				if strings.HasPrefix(m, "auth.") {
					got = append(got, m)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("server saw %v, want %v", got, tt.want)
			}
			// A later login skips a login_ex the server lacks.
			f.expireSessions()
			if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
				t.Fatal(err)
			}
			if !tt.loginEx && f.countMethod("auth.login_ex") != 1 {
				t.Fatalf("auth.login_ex tried again: %v", f.methods())
			}
		})
	}
}

// TestLoginBackoff: with a wrong password, a storm of calls makes one
// login; the refusal is held, then one login is tried again.
func TestLoginBackoff(t *testing.T) {
	for _, transport := range []string{TransportWebSocket, TransportREST} {
		t.Run(transport, func(t *testing.T) {
			f := newFakeNAS(t, "25.04").start()
			cfg := f.config()
			cfg.Transport = transport
			cfg.Password = "wrong-password"
			c := newClient(t, cfg)
			c.authGt.hold = time.Hour
			var wg sync.WaitGroup
			for range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := c.Call(ctxT(t), "test.echo", 1)
					if !errors.Is(err, ErrAuth) {
						t.Errorf("error %v, want ErrAuth", err)
						return
					}
					for _, want := range []string{`"root"`, c.Endpoint(), "httpConnection.password"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("%q does not mention %s", err, want)
						}
					}
				}()
			}
			wg.Wait()
			attempts := func() int {
				if transport == TransportREST {
					return len(f.restRequests())
				}
				return int(f.logins.Load())
			}
			if n := attempts(); n != 1 {
				t.Fatalf("%d login attempts for 50 calls, want 1", n)
			}
			// Once the hold has passed, the next call tries once more.
			c.authGt.mu.Lock()
			c.authGt.until = time.Now().Add(-time.Second)
			c.authGt.mu.Unlock()
			if _, err := c.Call(ctxT(t), "test.echo", 1); !errors.Is(err, ErrAuth) {
				t.Fatalf("after the hold: %v", err)
			}
			if n := attempts(); n != 2 {
				t.Fatalf("%d login attempts after the hold, want 2", n)
			}
		})
	}
}

func TestWrongAPIKeyNamesTheKey(t *testing.T) {
	f := newFakeNAS(t, "25.10").startTLS()
	cfg := f.keyConfig()
	cfg.APIKey = "2-zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA9876543210zz"
	cfg.AllowInsecure = true
	c := newClient(t, cfg)
	_, err := c.Call(ctxT(t), "test.echo", 1)
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "API key") || !strings.Contains(err.Error(), "httpConnection.apiKey") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), cfg.APIKey) {
		t.Fatalf("error leaks the key: %v", err)
	}
}

func TestLegacyJobsSwitchedOffFrom2510(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    int
	}{{"25.04", 0}, {"25.10", 1}, {"26.04", 1}} {
		f := newFakeNAS(t, tt.version).start()
		c := newClient(t, f.config())
		if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
			t.Fatal(err)
		}
		if n := f.countMethod("core.set_options"); n != tt.want {
			t.Errorf("%s: core.set_options called %d times, want %d", tt.version, n, tt.want)
		}
	}
}

func TestCallTimeoutKeepsConnection(t *testing.T) {
	f := newFakeNAS(t, "25.04")
	f.handle("test.hang", func(ctx context.Context, p []json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	f.start()
	c := newClient(t, f.config())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "test.hang")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "test.hang: timed out") {
		t.Fatalf("error %v", err)
	}
	// Other calls still share the one connection.
	if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Dials != 1 {
		t.Fatalf("stats %+v: the timeout cost the connection", st)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseThenCallAgain(t *testing.T) {
	f := newFakeNAS(t, "25.04")
	entered := make(chan struct{})
	f.handle("test.hang", func(ctx context.Context, p []json.RawMessage) (any, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	f.start()
	c := newClient(t, f.config())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctxT(t), "test.hang")
		errc <- err
	}()
	<-entered
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("call in flight at Close: %v", err)
	}
	if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
		t.Fatalf("call after Close: %v", err)
	}
	if st := c.Stats(); st.Dials != 2 || st.Logins != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSilentPeerDetected: a server that stops answering without closing
// the connection is found out by a ping after a call times out, so later
// calls get a new connection instead of timing out one after another.
func TestSilentPeerDetected(t *testing.T) {
	f := newFakeNAS(t, "25.04")
	f.freezeOn = "test.freeze"
	f.start()
	cfg := f.config()
	cfg.Timeout = 300 * time.Millisecond
	c := newClient(t, cfg)
	_, err := c.Call(context.Background(), "test.freeze")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("frozen call: %v", err)
	}
	waitFor(t, func() bool {
		c.ws.lanes[0].mu.Lock()
		defer c.ws.lanes[0].mu.Unlock()
		return c.ws.lanes[0].cur != nil && !c.ws.lanes[0].cur.alive()
	})
	if _, err := c.Call(context.Background(), "test.echo", 1); err != nil {
		t.Fatalf("call after the silent peer: %v", err)
	}
	if st := c.Stats(); st.Reconnects != 1 {
		t.Fatalf("stats %+v", st)
	}
}
