package truenas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// The "Bad input" list for TrueNAS, checked through the CSI driver
// against the simulator: wrong credentials, a release too old for the
// backend, an untrusted certificate, validation errors, a restart in the
// middle of a call and share ids reused by another object.

func createReq(name string, block bool) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: caps(block),
		CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}}
}

// wantCode fails unless err is a status with code whose message holds
// every one of subs.
func wantCode(t *testing.T, err error, code codes.Code, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %v", code)
	}
	s, _ := status.FromError(err)
	if s.Code() != code {
		t.Fatalf("code %v, want %v: %v", s.Code(), code, err)
	}
	for _, sub := range subs {
		if !strings.Contains(s.Message(), sub) {
			t.Errorf("message %q does not mention %q", s.Message(), sub)
		}
	}
}

// setLine replaces the httpConnection line starting with "  key:" (or adds
// one after the host line).
func setLine(yaml, key, value string) string {
	lines := strings.Split(yaml, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  "+key+":") {
			lines[i] = "  " + key + ": " + value
			return strings.Join(lines, "\n")
		}
	}
	return strings.Replace(yaml, "\n  host: ", "\n  "+key+": "+value+"\n  host: ", 1)
}

// dropLine removes the httpConnection line starting with "  key:".
func dropLine(yaml, key string) string {
	var out []string
	for _, l := range strings.Split(yaml, "\n") {
		if !strings.HasPrefix(l, "  "+key+":") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// withoutCACert removes httpConnection.caCert and its PEM block.
func withoutCACert(yaml string) string {
	var out []string
	inCert := false
	for _, l := range strings.Split(yaml, "\n") {
		switch {
		case strings.HasPrefix(l, "  caCert:"):
			inCert = true
			continue
		case inCert && strings.HasPrefix(l, "    "):
			continue
		}
		inCert = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func noVolumes(t *testing.T, h *truenashost.Host, parent string) {
	t.Helper()
	if got := volumeDatasets(h, parent); len(got) != 0 {
		t.Errorf("datasets %v exist", got)
	}
	if n := shareObjects(h); n != 0 {
		t.Errorf("%d share objects exist: %+v", n, h.Server.Sharing().State())
	}
}

// TestBadCredentials: a wrong API key or password is the configuration's
// problem: FAILED_PRECONDITION naming the endpoint and the keys to check,
// the secret never echoed, and concurrent calls do not storm the login.
func TestBadCredentials(t *testing.T) {
	const wrongKey = "1-ThisKeyIsWrongThisKeyIsWrongThisKeyIsWrongThisKeyIsWrongABCDEFGH"
	const wrongPassword = "not-the-password-42"
	cases := []struct {
		name   string
		edit   func(string) string
		secret string
		hint   string // the keys the message tells to check
	}{
		{"wrong api key", func(y string) string { return setLine(y, "apiKey", wrongKey) }, wrongKey, "httpConnection.apiKey"},
		{"wrong password", func(y string) string {
			return setLine(dropLine(y, "apiKey"), "password", wrongPassword)
		}, wrongPassword, "httpConnection.password"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := startHost(t, truenashost.Options{})
			d := newDriver(t, c.edit(h.DriverConfig("freenas-api-nfs", "vols", "")))
			endpoint := fmt.Sprintf("%s:%d", h.Host, h.Port)
			_, err := d.CreateVolume(context.Background(), createReq("pvc-1", false))
			wantCode(t, err, codes.FailedPrecondition, endpoint, c.hint)
			if strings.Contains(err.Error(), c.secret) {
				t.Errorf("error shows the secret: %v", err)
			}
			before := h.Server.Stats()
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = d.CreateVolume(context.Background(), createReq(fmt.Sprintf("pvc-c%d", i), false))
				}()
			}
			wg.Wait()
			for _, err := range errs {
				wantCode(t, err, codes.FailedPrecondition)
			}
			after := h.Server.Stats()
			if n := after.LoginFailures - before.LoginFailures; n > 3 {
				t.Errorf("20 concurrent calls made %d refused logins; want at most 3", n)
			}
			if n := after.Logins - before.Logins; n != 0 {
				t.Errorf("%d logins succeeded with wrong credentials", n)
			}
			for _, r := range h.Server.Calls() {
				if strings.Contains(string(r.Params), c.secret) {
					t.Errorf("the server recorded the secret in %s", r.Method)
				}
			}
			noVolumes(t, h, "tank/k8s/vols")
		})
	}
}

// TestVersionTooOld: freenas-api-nvmeof needs 25.10 (nvmet.*); older
// releases get FAILED_PRECONDITION naming both versions and nothing made.
func TestVersionTooOld(t *testing.T) {
	for _, v := range []string{"24.10", "25.04"} {
		t.Run(v, func(t *testing.T) {
			h := startHost(t, truenashost.Options{Version: v})
			d := newDriver(t, h.DriverConfig("freenas-api-nvmeof", "vols", ""))
			_, err := d.CreateVolume(context.Background(), createReq("pvc-1", true))
			wantCode(t, err, codes.FailedPrecondition, "25.10", v)
			noVolumes(t, h, "tank/k8s/vols")
		})
	}
}

// TestUnknownCertificate: a self-signed certificate is refused unless
// caCert trusts it or allowInsecure is set.
func TestUnknownCertificate(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(string) string
		wantCode codes.Code
	}{
		{"no caCert", withoutCACert, codes.FailedPrecondition},
		{"no caCert, allowInsecure", func(y string) string { return setLine(withoutCACert(y), "allowInsecure", "true") }, codes.OK},
		{"caCert", func(y string) string { return y }, codes.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := startHost(t, truenashost.Options{})
			d := newDriver(t, c.edit(h.DriverConfig("freenas-api-nfs", "vols", "")))
			_, err := d.CreateVolume(context.Background(), createReq("pvc-1", false))
			if c.wantCode == codes.OK {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			wantCode(t, err, c.wantCode, "allowInsecure", "caCert")
			noVolumes(t, h, "tank/k8s/vols")
		})
	}
}

// TestValidationErrors: what the server refuses comes back as
// INVALID_ARGUMENT naming the attribute; a native property the API cannot
// set is refused naming it. Nothing is left behind.
func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name, driver, zfsExtra string
		edit                   func(string) string
		block                  bool
		want                   []string
	}{
		{name: "iscsi portal does not exist", driver: "freenas-api-iscsi", block: true,
			edit: func(y string) string {
				return strings.Replace(y, "targetGroupPortalGroup: 1", "targetGroupPortalGroup: 77", 1)
			},
			want: []string{"iscsi_target_create.groups.0.portal", "77"}},
		{name: "nfs network refused", driver: "freenas-api-nfs",
			edit: func(y string) string {
				return strings.Replace(y, "shareAllowedNetworks: []", "shareAllowedNetworks: [\"10.0.0.300/99\"]", 1)
			},
			want: []string{"create.networks", "10.0.0.300/99"}},
		{name: "native property the API cannot set", driver: "freenas-api-nfs",
			zfsExtra: "  datasetProperties:\n    canmount: noauto\n",
			want:     []string{"canmount"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := startHost(t, truenashost.Options{})
			y := h.DriverConfig(c.driver, "vols", c.zfsExtra)
			if c.edit != nil {
				y = c.edit(y)
			}
			d := newDriver(t, y)
			_, err := d.CreateVolume(context.Background(), createReq("pvc-1", c.block))
			wantCode(t, err, codes.InvalidArgument, c.want...)
			noVolumes(t, h, "tank/k8s/vols")
		})
	}
}

// TestRestartMidCall drops the connection carrying the n-th call of
// CreateVolume (the call takes effect, its answer is lost), or restarts
// the middleware there: a retried CreateVolume converges on exactly one
// dataset and one set of share objects, and DeleteVolume removes them.
func TestRestartMidCall(t *testing.T) {
	drivers := []struct {
		driver string
		block  bool
		// want counts the share objects of one volume.
		want func(st sharingCounts) string
	}{
		{"freenas-api-nfs", false, func(c sharingCounts) string { return c.check(map[string]int{"nfs": 1}) }},
		{"freenas-api-iscsi", true, func(c sharingCounts) string {
			return c.check(map[string]int{"target": 1, "extent": 1, "mapping": 1})
		}},
		{"freenas-api-nvmeof", true, func(c sharingCounts) string {
			return c.check(map[string]int{"subsys": 1, "namespace": 1, "portlink": 1})
		}},
	}
	for _, dr := range drivers {
		for _, restart := range []bool{false, true} {
			for n := 1; n <= 6; n++ {
				mode := "drop"
				if restart {
					mode = "restart"
				}
				t.Run(fmt.Sprintf("%s/%s/%d", dr.driver, mode, n), func(t *testing.T) {
					h := startHost(t, truenashost.Options{Version: "25.10"})
					d := newDriver(t, h.DriverConfig(dr.driver, "vols", ""))
					ctx := context.Background()
					// Connect and log in first, so n counts the calls of
					// CreateVolume itself.
					if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
						t.Fatalf("capacity: %v", err)
					}
					before := h.Server.Stats()
					if restart {
						restartAt(h, n)
					} else {
						h.Server.Faults().DropAfter(n)
					}
					var vol *csi.CreateVolumeResponse
					err := retry(t, func() (err error) {
						vol, err = d.CreateVolume(ctx, createReq("pvc-1", dr.block))
						return err
					})
					if err != nil {
						t.Fatalf("create never converged: %v", err)
					}
					if got := volumeDatasets(h, "tank/k8s/vols"); len(got) != 1 {
						t.Errorf("datasets %v, want one", got)
					}
					if msg := dr.want(countSharing(h)); msg != "" {
						t.Errorf("after create: %s: %+v", msg, h.Server.Sharing().State())
					}
					// A fault still armed (CreateVolume made fewer than n
					// calls) hits DeleteVolume instead.
					err = retry(t, func() error {
						_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()})
						return err
					})
					if err != nil {
						t.Fatalf("delete never converged: %v", err)
					}
					after := h.Server.Stats()
					if got := after.DroppedConnections + after.Restarts - before.DroppedConnections - before.Restarts; got != 1 {
						t.Errorf("%d drops and restarts, want 1 (the fault missed)", got)
					}
					if msg := countSharing(h).check(nil); msg != "" {
						t.Errorf("after delete: %s: %+v", msg, h.Server.Sharing().State())
					}
					if got := volumeDatasets(h, "tank/k8s/vols"); len(got) != 0 {
						t.Errorf("datasets %v left after delete", got)
					}
				})
			}
		}
	}
}

// retry runs op until it succeeds, as the CSI sidecars would; only
// UNAVAILABLE (the connection dropped) is worth another try.
func retry(t *testing.T, op func() error) error {
	t.Helper()
	var err error
	for try := 0; try < 5; try++ {
		if err = op(); err == nil {
			return nil
		}
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("try %d: %v (want success or UNAVAILABLE)", try, err)
		}
		t.Logf("try %d: %v", try, err)
	}
	return err
}

// restartAt restarts the middleware right after the n-th method call
// from now has run (so it took effect) and before its answer is sent:
// every handler is wrapped to count calls.
func restartAt(h *truenashost.Host, n int) {
	reg := h.Server.Registry()
	var mu sync.Mutex
	count := 0
	for _, name := range reg.Names() {
		m, _ := reg.Lookup(name)
		wrapped := *m
		inner := m.Handler
		wrapped.Handler = func(c *middleware.Call, p []json.RawMessage) (any, error) {
			res, err := inner(c, p)
			mu.Lock()
			count++
			hit := count == n
			mu.Unlock()
			if hit {
				h.Server.Restart()
			}
			return res, err
		}
		reg.Add(wrapped)
	}
}

type sharingCounts map[string]int

func countSharing(h *truenashost.Host) sharingCounts {
	st := h.Server.Sharing().State()
	return sharingCounts{
		"nfs": len(st.NFSShares), "smb": len(st.SMBShares),
		"target": len(st.ISCSITargets), "extent": len(st.ISCSIExtents), "mapping": len(st.ISCSITargetExtents),
		"subsys": len(st.NVMetSubsystems), "namespace": len(st.NVMetNamespaces), "portlink": len(st.NVMetPortSubsys),
	}
}

// check describes every count that differs from want (absent: 0).
func (c sharingCounts) check(want map[string]int) string {
	var diffs []string
	for k, n := range c {
		if n != want[k] {
			diffs = append(diffs, fmt.Sprintf("%d %s, want %d", n, k, want[k]))
		}
	}
	return strings.Join(diffs, "; ")
}

// volumeDatasets lists the datasets under parent, each once (datasets()
// walks the children of every row of a flat query, so repeats them).
func volumeDatasets(h *truenashost.Host, parent string) []string {
	var out []string
	for _, d := range datasets(h) {
		if strings.HasPrefix(d, parent+"/") {
			out = append(out, d)
		}
	}
	return out
}

// TestIDReuse: an id recorded on a volume that now belongs to another
// object (its own was deleted behind the driver's back and TrueNAS handed
// the id out again) is never deleted with the volume.
func TestIDReuse(t *testing.T) {
	cases := []struct {
		driver string
		block  bool
		// steal deletes the volume's share object in-process and makes
		// another that gets the same id; it returns a check that the other
		// object still exists.
		steal func(t *testing.T, h *truenashost.Host) func() bool
	}{
		{"freenas-api-nfs", false, func(t *testing.T, h *truenashost.Host) func() bool {
			st := h.Server.Sharing().State()
			if len(st.NFSShares) != 1 {
				t.Fatalf("NFS shares: %+v", st.NFSShares)
			}
			id := st.NFSShares[0].ID
			inProcess(t, h, "sharing.nfs.delete", nil, id)
			inProcess(t, h, "pool.dataset.create", nil, map[string]any{"name": "tank/other"})
			var made struct {
				ID int `json:"id"`
			}
			inProcess(t, h, "sharing.nfs.create", &made, map[string]any{"path": "/mnt/tank/other"})
			if made.ID != id {
				t.Fatalf("new share got id %d, want the reused %d", made.ID, id)
			}
			return func() bool {
				for _, s := range h.Server.Sharing().State().NFSShares {
					if s.ID == id && s.Path == "/mnt/tank/other" {
						return true
					}
				}
				return false
			}
		}},
		{"freenas-api-iscsi", true, func(t *testing.T, h *truenashost.Host) func() bool {
			st := h.Server.Sharing().State()
			if len(st.ISCSITargets) != 1 {
				t.Fatalf("iSCSI targets: %+v", st.ISCSITargets)
			}
			id := st.ISCSITargets[0].ID
			inProcess(t, h, "iscsi.target.delete", nil, id, true)
			var made struct {
				ID int `json:"id"`
			}
			inProcess(t, h, "iscsi.target.create", &made, map[string]any{"name": "someone-else", "groups": []any{map[string]any{"portal": 1}}})
			if made.ID != id {
				t.Fatalf("new target got id %d, want the reused %d", made.ID, id)
			}
			return func() bool {
				for _, s := range h.Server.Sharing().State().ISCSITargets {
					if s.ID == id && s.Name == "someone-else" {
						return true
					}
				}
				return false
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.driver, func(t *testing.T) {
			h := startHost(t, truenashost.Options{})
			d := newDriver(t, h.DriverConfig(c.driver, "vols", ""))
			ctx := context.Background()
			vol, err := d.CreateVolume(ctx, createReq("pvc-a", c.block))
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			stillThere := c.steal(t, h)
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if !stillThere() {
				t.Errorf("the other object with the reused id was deleted: %+v", h.Server.Sharing().State())
			}
			if got := volumeDatasets(h, "tank/k8s/vols"); len(got) != 0 {
				t.Errorf("datasets %v left after delete", got)
			}
		})
	}
}

// inProcess calls a middleware method as root, bypassing the driver.
func inProcess(t *testing.T, h *truenashost.Host, method string, out any, params ...any) {
	t.Helper()
	m, ok := h.Server.Registry().Lookup(method)
	if !ok {
		t.Fatalf("no method %s", method)
	}
	raw := make([]json.RawMessage, len(params))
	for i, p := range params {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		raw[i] = b
	}
	res, err := m.Handler(&middleware.Call{Ctx: context.Background(), Version: h.Version, User: "root", Progress: func(float64, string) {}}, raw)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if out != nil {
		b, _ := json.Marshal(res)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
}
