package infinia

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestWrongPasswordIsFailedPreconditionWithoutThePassword(t *testing.T) {
	f := newFake(t)
	doc := strings.Replace(accountYAML(f.url), "pw-1234", "wrong-secret-pw", 1)
	d := newTestDriver(t, doc, nil)
	_, err := d.CreateVolume(context.Background(), createReq("pvc-1", 1<<20, nil))
	wantCode(t, err, codes.FailedPrecondition, acctKey, f.url, "accounts."+acctKey+".password")
	if strings.Contains(err.Error(), "wrong-secret-pw") {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestSecretsOverrideTheAccount(t *testing.T) {
	f := newFake(t)
	doc := strings.Replace(accountYAML("http://127.0.0.1:1"), "pw-1234", "old-password", 1)
	d := newTestDriver(t, doc, nil)
	ctx := context.Background()
	req := createReq("pvc-s", 1<<20, nil)
	req.Secrets = map[string]string{"apis": " " + f.url + " ", "password": "pw-1234", "insecureSkipVerify": "true"}
	resp, err := d.CreateVolume(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId(), Secrets: req.Secrets}); err != nil {
		t.Fatal(err)
	}

	req.Secrets = map[string]string{"insecureSkipVerify": "sure-secret-value"}
	_, err = d.CreateVolume(ctx, req)
	wantCode(t, err, codes.InvalidArgument, "secret insecureSkipVerify")
	req.Secrets = map[string]string{"apis": "ftp://secret-host"}
	_, err = d.CreateVolume(ctx, req)
	wantCode(t, err, codes.InvalidArgument, "secret apis")
	if strings.Contains(err.Error(), "secret-host") {
		t.Fatalf("error echoes the secret: %v", err)
	}
}

func TestUnreachableIsUnavailableNamingEndpoints(t *testing.T) {
	d := newTestDriver(t, accountYAML("http://127.0.0.1:1, http://127.0.0.1:2"), nil)
	_, err := d.CreateVolume(context.Background(), createReq("pvc-1", 1<<20, nil))
	wantCode(t, err, codes.Unavailable, "http://127.0.0.1:1", "http://127.0.0.1:2")
}

func TestServerErrorsMapToCodes(t *testing.T) {
	const svc = "/redapi/v1/clusters/clu1/tenants/red/subtenants/red/services/csiService"
	cases := []struct {
		status int
		code   codes.Code
	}{
		{403, codes.PermissionDenied},
		{400, codes.InvalidArgument},
		{500, codes.Internal},
		{503, codes.Unavailable},
	}
	for _, tc := range cases {
		f := newFake(t)
		d := newTestDriver(t, accountYAML(f.url), nil)
		f.injectOnce("GET "+svc, tc.status)
		_, err := d.CreateVolume(context.Background(), createReq("pvc-1", 1<<20, nil))
		if status.Code(err) != tc.code {
			t.Errorf("HTTP %d: want %s, got %v", tc.status, tc.code, err)
		}
	}
}

func TestTokenExpiryIsTransparent(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	mustCreate(t, d, "pvc-1", 1<<20)
	f.mu.Lock()
	f.tokens = map[string]bool{}
	f.mu.Unlock()
	mustCreate(t, d, "pvc-2", 1<<20)
	if st := d.Stats(); st.Logins != 2 {
		t.Fatalf("want one re-login after the expiry, stats %+v", st)
	}
}

func TestCapabilities(t *testing.T) {
	d := &Driver{}
	resp, _ := d.ControllerGetCapabilities(context.Background(), nil)
	var got []string
	for _, c := range resp.GetCapabilities() {
		got = append(got, c.GetRpc().GetType().String())
	}
	for _, want := range []string{"CREATE_DELETE_VOLUME", "PUBLISH_UNPUBLISH_VOLUME", "EXPAND_VOLUME", "GET_CAPACITY", "LIST_VOLUMES", "GET_VOLUME"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	if strings.Contains(strings.Join(got, " "), "SNAPSHOT") || strings.Contains(strings.Join(got, " "), "CLONE") {
		t.Errorf("snapshots or clones advertised: %v", got)
	}
}
