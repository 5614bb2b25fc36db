package infinia

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// refusedURL is an http:// endpoint nothing listens on.
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

// The StorageClass secret apis is a secret: neither the gRPC error nor any
// log line (debug included) shows its URLs or hosts; endpoints from the
// config file still show.
func TestSecretAPIsNeverQuoted(t *testing.T) {
	const svc = "GET /redapi/v1/clusters/clu1/tenants/red/subtenants/red/services/csiService"
	f := newFake(t)
	fileEndpoint := refusedURL(t)
	dead := refusedURL(t)
	cases := []struct {
		name    string
		secrets func() map[string]string
		inject  int
		code    codes.Code
		want    []string
	}{
		{name: "unreachable", secrets: func() map[string]string { return map[string]string{"apis": dead + " , " + dead + "/"} },
			code: codes.Unavailable, want: []string{"secret apis entry 1", "secret apis entry 2"}},
		{name: "401", secrets: func() map[string]string { return map[string]string{"apis": f.url, "password": "wrong-pass"} },
			code: codes.FailedPrecondition, want: []string{"secret apis entry 1", "password"}},
		{name: "500", secrets: func() map[string]string { return map[string]string{"apis": f.url} }, inject: 500,
			code: codes.Internal, want: []string{"secret apis entry 1", "HTTP 500"}},
		{name: "failover then 500", secrets: func() map[string]string { return map[string]string{"apis": dead + "," + f.url} }, inject: 500,
			code: codes.Internal, want: []string{"secret apis entry 2", "HTTP 500"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			d, err := New(backend.Options{Config: parseYAML(t, accountYAML(fileEndpoint)),
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			if tc.inject != 0 {
				f.injectOnce(svc, tc.inject)
			}
			req := createReq("pvc-secret", 1<<20, nil)
			req.Secrets = tc.secrets()
			_, err = d.CreateVolume(context.Background(), req)
			wantCode(t, err, tc.code, tc.want...)
			var hidden []string
			for _, e := range strings.Split(req.Secrets["apis"], ",") {
				u, perr := url.Parse(strings.TrimSpace(e))
				if perr != nil {
					t.Fatal(perr)
				}
				hidden = append(hidden, strings.TrimSpace(e), u.Host, ":"+u.Port())
			}
			msg := status.Convert(err).Message()
			for _, h := range hidden {
				if strings.Contains(msg, h) {
					t.Errorf("gRPC error shows %q: %s", h, msg)
				}
				if strings.Contains(logs.String(), h) {
					t.Errorf("log shows %q:\n%s", h, logs.String())
				}
			}
		})
	}

	// The config file's endpoints are no secret: they are named.
	d := newTestDriver(t, accountYAML(fileEndpoint), nil)
	_, err := d.CreateVolume(context.Background(), createReq("pvc-file", 1<<20, nil))
	wantCode(t, err, codes.Unavailable, fileEndpoint)
}
