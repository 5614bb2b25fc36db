package infinia_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
)

// The "Bad input" list for Infinia, checked through the driver
// served over gRPC (standalone and behind the proxy) against the
// simulator: each mistake is answered with the gRPC code CSI asks for, a
// message naming what to fix, never a password or token, and nothing
// left on Infinia.

// badCase is one mistake and the answer it must get.
type badCase struct {
	name string
	// config is merged into the driver config (nil: none); closed is an
	// endpoint URL that refuses connections.
	config func(r *rig, closed string) map[string]any
	setup  func(r *rig)
	call   func(r *rig) error
	code   codes.Code
	// want are substrings of the message; "{url}" is the simulator's URL,
	// "{closed}" the refusing endpoint.
	want    []string
	secrets []string // never in the message (the host's password and tokens never are)
	after   func(r *rig)
}

// ctx is the context of the calls: none of them should hang.
var ctx = context.Background()

// createWith is CreateVolume of pvc-bad (1 GiB) with extra parameters.
func createWith(params map[string]string) func(r *rig) error {
	return func(r *rig) error {
		_, err := r.ctl.CreateVolume(ctx, r.createReq("pvc-bad", 1<<30, params))
		return err
	}
}

// createWithSecrets is CreateVolume of pvc-bad with provisioner secrets
// ("{url}" in a value is the simulator's URL).
func createWithSecrets(secrets map[string]string) func(r *rig) error {
	return func(r *rig) error {
		req := r.createReq("pvc-bad", 1<<30, nil)
		req.Secrets = map[string]string{}
		for k, v := range secrets {
			req.Secrets[k] = strings.ReplaceAll(v, "{url}", r.h.URL)
		}
		_, err := r.ctl.CreateVolume(ctx, req)
		return err
	}
}

func nothingLeft(r *rig) { r.rest.empty() }

func badInputCases() []badCase {
	const wrongPassword = "Wr0ng-Passw0rd-77"
	return []badCase{
		{name: "unknown account", call: createWith(map[string]string{"account": "clu1/blue/csiAccount"}),
			code: codes.InvalidArgument, want: []string{"parameter account", `"clu1/blue/csiAccount"`, "configured: clu1/red/csiAccount"}, after: nothingLeft},
		{name: "account left out with two configured",
			config: func(r *rig, _ string) map[string]any {
				return map[string]any{"accounts": map[string]any{"clu1/blue/csiAccount": map[string]any{"apis": []any{r.h.URL}, "password": "x"}}}
			},
			call: createWith(nil), code: codes.InvalidArgument,
			want: []string{"parameter account", "required", "clu1/blue/csiAccount, clu1/red/csiAccount"}, after: nothingLeft},
		{name: "service without subtenant", call: createWith(map[string]string{"service": "csiService"}),
			code: codes.InvalidArgument, want: []string{"parameter service", `"csiService"`, "<subtenant>/<service>"}, after: nothingLeft},
		{name: "service missing", call: createWith(map[string]string{"service": ""}),
			code: codes.InvalidArgument, want: []string{"parameter service", "required"}, after: nothingLeft},
		{name: "service does not exist", call: createWith(map[string]string{"service": "red/nope"}),
			code: codes.InvalidArgument, want: []string{"parameter service", "red/nope", "clu1/red/csiAccount"}, after: nothingLeft},
		{name: "instances not numeric", call: createWith(map[string]string{"instances": "1,x"}),
			code: codes.InvalidArgument, want: []string{"parameter instances", `"1,x"`, `bad entry "x"`}, after: nothingLeft},
		{name: "instance unknown", call: createWith(map[string]string{"instances": "1,9"}),
			code: codes.InvalidArgument, want: []string{"parameter instances", "instance 9"}, after: nothingLeft},
		{name: "dataport out of range", call: createWith(map[string]string{"dataport": "70000"}),
			code: codes.InvalidArgument, want: []string{"parameter dataport", `"70000"`}, after: nothingLeft},
		{name: "owneruid without groupuid", call: createWith(map[string]string{"owneruid": "1000"}),
			code: codes.InvalidArgument, want: []string{"parameter groupuid", "owneruid (1000)"}, after: nothingLeft},
		{name: "groupuid not numeric", call: createWith(map[string]string{"owneruid": "1000", "groupuid": "staff"}),
			code: codes.InvalidArgument, want: []string{"parameter groupuid", `"staff"`}, after: nothingLeft},
		{name: "perms not octal", call: createWith(map[string]string{"perms": "0789"}),
			code: codes.InvalidArgument, want: []string{"parameter perms", `"0789"`, "octal"}, after: nothingLeft},
		{name: "name Infinia refuses",
			call: func(r *rig) error {
				_, err := r.ctl.CreateVolume(ctx, r.createReq("pvc bad", 1<<30, nil))
				return err
			},
			code: codes.InvalidArgument, want: []string{`"pvc bad"`, "Infinia allows only"}, after: nothingLeft},
		{name: "snapshot source",
			call: func(r *rig) error {
				req := r.createReq("pvc-bad", 1<<30, nil)
				req.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
					Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: r.snapshotID("snap-1")}}}
				_, err := r.ctl.CreateVolume(ctx, req)
				return err
			},
			code: codes.InvalidArgument, want: []string{"snapshots and clones are not offered"}, after: nothingLeft},
		{name: "zone not requisite",
			config: func(r *rig, _ string) map[string]any { return account(r.h, map[string]any{"zone": "zone-a"}) },
			call: func(r *rig) error {
				req := r.createReq("pvc-bad", 1<<30, nil)
				req.AccessibilityRequirements = &csi.TopologyRequirement{Requisite: []*csi.Topology{
					{Segments: map[string]string{"topology.kubernetes.io/zone": "zone-b"}}}}
				_, err := r.ctl.CreateVolume(ctx, req)
				return err
			},
			code: codes.InvalidArgument, want: []string{`"zone-a"`, `"zone-b"`, "accounts.clu1/red/csiAccount.zone"}, after: nothingLeft},
		{name: "wrong password",
			config: func(r *rig, _ string) map[string]any {
				return account(r.h, map[string]any{"password": wrongPassword})
			},
			call: createWith(nil), code: codes.FailedPrecondition,
			want:    []string{"{url}", "accounts.clu1/red/csiAccount.password", "level clu1/red"},
			secrets: []string{wrongPassword},
			after: func(r *rig) {
				// A refused login is remembered: concurrent and repeated
				// calls do not each cost the server a login.
				before := r.h.Server.Stats()
				var wg sync.WaitGroup
				for i := range 16 {
					wg.Go(func() {
						_, err := r.ctl.CreateVolume(ctx, r.createReq(fmt.Sprintf("pvc-c%d", i), 1<<30, nil))
						r.wantCode(err, codes.FailedPrecondition)
					})
				}
				wg.Wait()
				after := r.h.Server.Stats()
				if n := after.LoginFailures - before.LoginFailures; n > 1 {
					r.t.Errorf("16 calls right after a refused login made %d more login attempts; want at most 1", n)
				}
				if after.Logins != 0 {
					r.t.Errorf("%d logins succeeded with a wrong password", after.Logins)
				}
				r.rest.empty()
			}},
		{name: "wrong password in the secret", call: createWithSecrets(map[string]string{"password": wrongPassword}),
			code: codes.FailedPrecondition, want: []string{"{url}", "password secret"}, secrets: []string{wrongPassword}, after: nothingLeft},
		{name: "secret insecureSkipVerify not a bool", call: createWithSecrets(map[string]string{"insecureSkipVerify": "sometimes"}),
			code: codes.InvalidArgument, want: []string{"secret insecureSkipVerify", "true or false"}, secrets: []string{"sometimes"}, after: nothingLeft},
		{name: "secret apis not a URL", call: createWithSecrets(map[string]string{"apis": "{url}, ftp://admin:Pw-in-url@infinia"}),
			code: codes.InvalidArgument, want: []string{"secret apis", "entry 2"}, secrets: []string{"Pw-in-url", "admin"}, after: nothingLeft},
		{name: "no endpoint reachable",
			config: func(r *rig, closed string) map[string]any { return account(r.h, map[string]any{"apis": []any{closed}}) },
			call:   createWith(nil), code: codes.Unavailable,
			want: []string{"no Infinia API endpoint could be reached", "{closed}"}, after: nothingLeft},
		{name: "untrusted certificate",
			config: func(r *rig, _ string) map[string]any {
				return account(r.h, map[string]any{"insecureSkipVerify": false})
			},
			call: createWith(nil), code: codes.FailedPrecondition,
			want: []string{"{url}", "caCert", "insecureSkipVerify: true"}, after: nothingLeft},
		{name: "quota exhausted",
			setup: func(r *rig) { mustQuota(r, "clu1/red/red/csiService", 1<<30) },
			call: func(r *rig) error {
				_, err := r.ctl.CreateVolume(ctx, r.createReq("pvc-big", 2<<30, nil))
				return err
			},
			code: codes.ResourceExhausted, want: []string{"no room for 2147483648 bytes", "red/csiService", "insufficient space"}, after: nothingLeft},
		{name: "expand past the quota",
			setup: func(r *rig) {
				r.create("pvc-1")
				mustQuota(r, "clu1/red/red/csiService", 1<<30)
			},
			call: func(r *rig) error {
				_, err := r.ctl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: r.id(r.h.Account + ":" + r.h.Service + "/pvc-1"),
					CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}})
				return err
			},
			code: codes.OutOfRange, want: []string{"pvc-1", "2147483648"},
			after: func(r *rig) {
				if v := r.rest.getVolume("pvc-1"); v == nil || v.NBlocks*v.BlockSize != 1<<30 {
					r.t.Errorf("volume after a refused expansion: %+v", v)
				}
			}},
		{name: "existing volume of another size",
			setup: func(r *rig) { r.create("pvc-1") },
			call: func(r *rig) error {
				_, err := r.ctl.CreateVolume(ctx, r.createReq("pvc-1", 2<<30, nil))
				return err
			},
			code: codes.AlreadyExists, want: []string{"pvc-1", "1073741824"}},
		{name: "handle of an account not configured",
			setup: func(r *rig) { r.create("pvc-1") },
			call: func(r *rig) error {
				_, err := r.ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: r.id("clu9/x/acct:red/csiService/pvc-1")})
				return err
			},
			code: codes.FailedPrecondition, want: []string{"account clu9/x/acct is not configured", "accounts.clu9/x/acct"},
			after: func(r *rig) {
				if r.rest.getVolume("pvc-1") == nil {
					r.t.Error("pvc-1 of the configured account is gone")
				}
			}},
		{name: "node id without NQN",
			setup: func(r *rig) { r.create("pvc-1") },
			call: func(r *rig) error {
				_, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
					VolumeId: r.id(r.h.Account + ":" + r.h.Service + "/pvc-1"), NodeId: "n=node-a", VolumeCapability: blockCap})
				return err
			},
			code: codes.NotFound, want: []string{`"n=node-a"`, "proxy.nodeId.parts.nqn", "/etc/nvme/hostnqn"},
			after: func(r *rig) {
				if h := r.rest.getSubsystem("pvc-1").Hosts; len(h) != 0 {
					r.t.Errorf("hosts %v allowed", h)
				}
			}},
		{name: "unpublish with a node id without NQN",
			setup: func(r *rig) { r.create("pvc-1") },
			call: func(r *rig) error {
				_, err := r.ctl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{
					VolumeId: r.id(r.h.Account + ":" + r.h.Service + "/pvc-1"), NodeId: "n=node-a"})
				return err
			},
			code: codes.OK},
	}
}

// snapshotID is a snapshot id in the rig's mode (the proxy answers
// NOT_FOUND itself for one that names no connection).
func (r *rig) snapshotID(id string) string {
	if r.m.proxy {
		return "s:infinia/" + id
	}
	return id
}

func mustQuota(r *rig, path string, bytes int64) {
	r.t.Helper()
	if err := r.h.Server.SetQuota(path, bytes); err != nil {
		r.t.Fatal(err)
	}
}

// TestBadInput runs every badCase standalone and behind the proxy.
func TestBadInput(t *testing.T) {
	for _, c := range badInputCases() {
		for _, m := range []mode{direct, proxied} {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				h := startHost(t, infiniahost.Options{})
				r := &rig{t: t, m: m, h: h, rest: newREST(t, h)}
				closed := fmt.Sprintf("http://127.0.0.1:%d", closedPort(t))
				var extra map[string]any
				if c.config != nil {
					extra = c.config(r, closed)
				}
				cl, err := serve(t, m, driverConfig(h, m, extra))
				if err != nil {
					t.Fatal(err)
				}
				r.ctl = cl.Controller
				if c.setup != nil {
					c.setup(r)
				}
				err = c.call(r)
				repl := strings.NewReplacer("{url}", h.URL, "{closed}", closed)
				want := make([]string, len(c.want))
				for i, w := range c.want {
					want[i] = repl.Replace(w)
				}
				r.wantCode(err, c.code, want...)
				if err != nil {
					noSecret(t, err.Error(), c.secrets...)
				}
				if c.after != nil {
					c.after(r)
				}
			})
		}
	}
}

// TestBadConfig: a config mistake names the file and the key. Standalone
// the plugin refuses to start; behind the proxy the connection's calls
// are FAILED_PRECONDITION. Secrets in the file are never echoed.
func TestBadConfig(t *testing.T) {
	const acct = "accounts.clu1/red/csiAccount."
	cases := []struct {
		name    string
		config  func(h *infiniahost.Host) map[string]any
		want    []string
		secrets []string
	}{
		{"owneruid without groupuid", settings(map[string]any{"owneruid": "1000"}),
			[]string{acct + "groupuid", "owneruid (1000)"}, nil},
		{"groupuid without owneruid", settings(map[string]any{"groupuid": "1000"}),
			[]string{acct + "owneruid", "groupuid (1000)"}, nil},
		{"perms unquoted", settings(map[string]any{"perms": 750}),
			[]string{acct + "perms", "quoted octal string", "750"}, nil},
		{"perms not octal", settings(map[string]any{"perms": "u=rwx"}),
			[]string{acct + "perms", `"u=rwx"`}, nil},
		{"two mistakes at once", settings(map[string]any{"owneruid": "root", "perms": "0999"}),
			[]string{acct + "owneruid", `"root"`, acct + "perms", `"0999"`}, nil},
		{"apis without scheme", settings(map[string]any{"apis": "infinia.example.com"}),
			[]string{acct + "apis", `"infinia.example.com"`, "https://"}, nil},
		{"apis carrying credentials", settings(map[string]any{"apis": []any{"https://csiAccount:Pw-in-url@infinia.example.com"}}),
			[]string{acct + "apis", "credentials"}, []string{"Pw-in-url"}},
		{"password missing", settings(map[string]any{"password": nil}),
			[]string{acct + "password", "required"}, nil},
		{"instance id not a number", settings(map[string]any{"default_instance_ids": []any{1, "two"}}),
			[]string{acct + "default_instance_ids[1]", `"two"`}, nil},
		{"maxConnsPerHost zero", settings(map[string]any{"maxConnsPerHost": 0}),
			[]string{acct + "maxConnsPerHost", "1 to 1024"}, nil},
		{"timeout not a duration", settings(map[string]any{"timeout": "soon"}),
			[]string{acct + "timeout", `"soon"`}, nil},
		{"account key without tenant", func(h *infiniahost.Host) map[string]any {
			return map[string]any{"accounts": map[string]any{"clu1/csiAccount": map[string]any{"apis": h.URL, "password": "x"}}}
		}, []string{"accounts.clu1/csiAccount", "<cluster>/<tenant>/<service account>"}, nil},
	}
	for _, c := range cases {
		for _, m := range []mode{direct, proxied} {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				h := startHost(t, infiniahost.Options{})
				cl, err := serve(t, m, driverConfig(h, m, c.config(h)))
				var msg string
				if m.proxy {
					if err != nil {
						t.Fatalf("the proxy refused to start: %v", err)
					}
					_, err := cl.Controller.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1",
						VolumeCapabilities: []*csi.VolumeCapability{blockCap},
						Parameters:         map[string]string{"connection": "infinia", "service": h.Service}})
					r := &rig{t: t, h: h}
					r.wantCode(err, codes.FailedPrecondition, "infinia.yaml")
					msg = err.Error()
				} else {
					if err == nil {
						t.Fatal("the plugin started with a bad config")
					}
					msg = err.Error()
					if !strings.Contains(msg, "main.yaml") {
						t.Errorf("error %q does not name the file", msg)
					}
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q does not mention %q", msg, w)
					}
				}
				noSecret(t, msg, append(c.secrets, h.Password)...)
				if st := h.Server.Stats(); st.Total() != 0 {
					t.Errorf("a refused config reached the server: %v", st.Requests)
				}
			})
		}
	}
}

// settings is a config function merging s into the host's account.
func settings(s map[string]any) func(h *infiniahost.Host) map[string]any {
	return func(h *infiniahost.Host) map[string]any { return account(h, s) }
}

// TestFirstEndpointDown: with the first API endpoint refusing connections
// (http or https), or accepting and hanging up at once, the next one is
// used — and, once it answered, tried first, so later calls do not pay
// for the dead one again.
func TestFirstEndpointDown(t *testing.T) {
	cases := []struct {
		name string
		dead func(t *testing.T) (url string, accepts func() int)
	}{
		{"refused http", func(t *testing.T) (string, func() int) {
			return fmt.Sprintf("http://127.0.0.1:%d", closedPort(t)), nil
		}},
		{"refused https", func(t *testing.T) (string, func() int) {
			return fmt.Sprintf("https://127.0.0.1:%d", closedPort(t)), nil
		}},
		{"hangs up", hangUp},
	}
	for _, c := range cases {
		for _, m := range []mode{direct, proxied} {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				h := startHost(t, infiniahost.Options{})
				dead, accepts := c.dead(t)
				cl, err := serve(t, m, driverConfig(h, m, account(h, map[string]any{"apis": []any{dead, h.URL}})))
				if err != nil {
					t.Fatal(err)
				}
				r := &rig{t: t, m: m, h: h, ctl: cl.Controller, rest: newREST(t, h)}
				id := r.create("pvc-1")
				seen := 0
				if accepts != nil {
					if seen = accepts(); seen == 0 {
						t.Fatal("the dead endpoint was never tried")
					}
				}
				if _, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: blockCap}); err != nil {
					t.Fatalf("publish: %v", err)
				}
				r.create("pvc-2")
				if _, err := r.ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Fatalf("delete: %v", err)
				}
				if accepts != nil && accepts() != seen {
					t.Errorf("the dead endpoint was tried again after the live one answered (%d connections, then %d)", seen, accepts())
				}
				if v := r.rest.volumes(); len(v) != 1 || v[0] != "pvc-2" {
					t.Errorf("volumes %v, want [pvc-2]", v)
				}
			})
		}
	}
}

// hangUp is an endpoint that accepts connections and closes them at once;
// accepts counts them.
func hangUp(t *testing.T) (string, func() int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return "http://" + l.Addr().String(), func() int { return int(n.Load()) }
}

// TestTokenExpiry: tokens that stop working between calls (ExpireTokens)
// or reach the end of their lifetime cost one new login and no error.
func TestTokenExpiry(t *testing.T) {
	for _, m := range []mode{direct, proxied} {
		t.Run("expired/"+m.name, func(t *testing.T) {
			r := newRig(t, m, infiniahost.Options{}, nil)
			id := r.create("pvc-1")
			before := r.h.Server.Stats()
			r.h.Server.ExpireTokens()
			if _, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: blockCap}); err != nil {
				t.Fatalf("publish after the tokens expired: %v", err)
			}
			mid := r.h.Server.Stats()
			if n := mid.Logins - before.Logins; n != 1 {
				t.Errorf("%d logins after the tokens expired, want 1", n)
			}
			if n := mid.Unauthorized - before.Unauthorized; n != 1 {
				t.Errorf("%d calls refused 401, want 1 (the first after the expiry)", n)
			}
			r.create("pvc-2")
			if n := r.h.Server.Stats().Logins - mid.Logins; n != 0 {
				t.Errorf("%d more logins with a fresh token", n)
			}
		})
		t.Run("lifetime/"+m.name, func(t *testing.T) {
			t.Parallel() // mostly sleeping
			r := newRig(t, m, infiniahost.Options{TokenTTL: time.Second}, nil)
			r.create("pvc-1")
			logins := r.h.Server.Stats().Logins
			// exp is in whole seconds, rounded up: a 1 s token lives < 2 s.
			time.Sleep(2200 * time.Millisecond)
			r.create("pvc-2")
			if n := r.h.Server.Stats().Logins - logins; n < 1 {
				t.Errorf("no new login after the token's lifetime ended")
			}
		})
	}
}

// TestDeletedBehindBack: a volume deleted on Infinia directly is NOT_FOUND
// where CSI says so, and gone for DeleteVolume and
// ControllerUnpublishVolume, which then remove what is left (the
// subsystem).
func TestDeletedBehindBack(t *testing.T) {
	calls := []struct {
		name string
		call func(r *rig, id string) error
		code codes.Code
	}{
		{"ValidateVolumeCapabilities", func(r *rig, id string) error {
			_, err := r.ctl.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: id, VolumeCapabilities: []*csi.VolumeCapability{blockCap}})
			return err
		}, codes.NotFound},
		{"ControllerGetVolume", func(r *rig, id string) error {
			_, err := r.ctl.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: id})
			return err
		}, codes.NotFound},
		{"ControllerExpandVolume", func(r *rig, id string) error {
			_, err := r.ctl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}})
			return err
		}, codes.NotFound},
		{"ControllerPublishVolume", func(r *rig, id string) error {
			_, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: blockCap})
			return err
		}, codes.NotFound},
		{"ControllerUnpublishVolume", func(r *rig, id string) error {
			_, err := r.ctl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: nodeID})
			return err
		}, codes.OK},
		{"DeleteVolume", func(r *rig, id string) error {
			_, err := r.ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
			return err
		}, codes.OK},
	}
	for _, m := range []mode{direct, proxied} {
		t.Run(m.name, func(t *testing.T) {
			r := newRig(t, m, infiniahost.Options{}, nil)
			id := r.create("pvc-1")
			if _, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: blockCap}); err != nil {
				t.Fatalf("publish: %v", err)
			}
			r.rest.mustDo(http.StatusOK, "DELETE", dataset+"/pvc-1?force=true", nil, nil)
			for _, c := range calls {
				want := []string{}
				if c.code == codes.NotFound {
					want = append(want, "pvc-1", "does not exist")
				}
				t.Run(c.name, func(t *testing.T) {
					sub := *r
					sub.t = t
					sub.wantCode(c.call(&sub, id), c.code, want...)
				})
			}
			r.rest.empty()
		})
	}
}

// TestRestartMidRun: the REST service restarts (connections dropped,
// tokens forgotten) while 16 callers create and publish volumes. Calls
// cut off answer UNAVAILABLE and are retried, as the sidecars would;
// every volume ends up made once, published, and deletable.
func TestRestartMidRun(t *testing.T) {
	const n = 16
	for _, m := range []mode{direct, proxied} {
		t.Run(m.name, func(t *testing.T) {
			r := newRig(t, m, infiniahost.Options{Latency: 2 * time.Millisecond}, nil)
			r.create("pvc-warm") // log in before the run
			start := r.h.Server.Stats()
			// Restart once the run has made a third of its ~11 requests
			// per volume: in the middle, whatever the machine's speed.
			done := make(chan struct{})
			restarted := make(chan struct{})
			go func() {
				defer close(restarted)
				for r.h.Server.Stats().Total()-start.Total() < n*11/3 {
					select {
					case <-done:
						return
					case <-time.After(time.Millisecond):
					}
				}
				r.h.Server.Restart()
			}()
			ids := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					name := fmt.Sprintf("pvc-%02d", i)
					err := retryUnavailable(r, func() error {
						v, err := r.ctl.CreateVolume(ctx, r.createReq(name, 1<<30, nil))
						ids[i] = v.GetVolume().GetVolumeId()
						return err
					})
					if err == nil {
						err = retryUnavailable(r, func() error {
							_, err := r.ctl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: ids[i], NodeId: nodeID, VolumeCapability: blockCap})
							return err
						})
					}
					if err != nil {
						t.Errorf("%s: %v", name, err)
					}
				})
			}
			wg.Wait()
			close(done)
			<-restarted
			st := r.h.Server.Stats()
			if st.Restarts != 1 {
				t.Fatalf("%d restarts: the run ended before the restart", st.Restarts)
			}
			if st.Logins-start.Logins < 1 {
				t.Errorf("no login after the restart forgot the tokens")
			}
			vols := r.rest.volumes()
			if len(vols) != n+1 {
				t.Errorf("%d volumes, want %d: %v", len(vols), n+1, vols)
			}
			for i := range n {
				name := fmt.Sprintf("pvc-%02d", i)
				ss := r.rest.getSubsystem(name)
				if ss == nil || len(ss.Namespaces) != 1 || len(ss.Hosts) != 1 || ss.Hosts[0] != hostNQN {
					t.Errorf("subsystem %s: %+v", name, ss)
				}
				if err := retryUnavailable(r, func() error {
					_, err := r.ctl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: ids[i]})
					return err
				}); err != nil {
					t.Errorf("delete %s: %v", name, err)
				}
			}
			if v := r.rest.volumes(); len(v) != 1 {
				t.Errorf("volumes left: %v", v)
			}
		})
	}
}

// retryUnavailable runs op until it succeeds or fails otherwise than
// UNAVAILABLE (at most 5 times).
func retryUnavailable(r *rig, op func() error) error {
	var err error
	for try := 0; try < 5; try++ {
		if err = op(); status.Code(err) != codes.Unavailable {
			return err
		}
		r.t.Logf("try %d: %v", try, err)
	}
	return err
}

// TestConcurrentCreatesOfOneName: 16 CreateVolume calls of one name at
// once make exactly one volume and one subsystem; every call that
// succeeds returns it (ABORTED, "try again", is allowed while another
// call holds the name).
func TestConcurrentCreatesOfOneName(t *testing.T) {
	for _, m := range []mode{direct, proxied} {
		t.Run(m.name, func(t *testing.T) {
			r := newRig(t, m, infiniahost.Options{Latency: time.Millisecond}, nil)
			var wg sync.WaitGroup
			var mu sync.Mutex
			ids := map[string]int{}
			for range 16 {
				wg.Go(func() {
					for try := 0; ; try++ {
						v, err := r.ctl.CreateVolume(ctx, r.createReq("pvc-same", 1<<30, nil))
						if status.Code(err) == codes.Aborted && try < 50 {
							time.Sleep(5 * time.Millisecond)
							continue
						}
						if err != nil {
							t.Errorf("create: %v", err)
							return
						}
						mu.Lock()
						ids[v.GetVolume().GetVolumeId()]++
						mu.Unlock()
						return
					}
				})
			}
			wg.Wait()
			if len(ids) != 1 || ids[r.id(r.h.Account+":"+r.h.Service+"/pvc-same")] != 16 {
				t.Errorf("volume ids returned: %v", ids)
			}
			if v, s := r.rest.volumes(), r.rest.subsystems(); len(v) != 1 || len(s) != 1 {
				t.Errorf("volumes %v, subsystems %v; want one each", v, s)
			}
			if ss := r.rest.getSubsystem("pvc-same"); ss == nil || len(ss.Namespaces) != 1 {
				t.Errorf("subsystem %+v", ss)
			}
		})
	}
}
