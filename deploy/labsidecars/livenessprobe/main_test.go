package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type identity struct {
	csi.UnimplementedIdentityServer
	ready *bool
	err   error
	delay time.Duration
}

func (i identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	time.Sleep(i.delay)
	if i.err != nil {
		return nil, i.err
	}
	if i.ready == nil {
		return &csi.ProbeResponse{}, nil
	}
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(*i.ready)}, nil
}

func TestHealthz(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		id   identity
		want int
	}{
		{"ready", identity{ready: &yes}, http.StatusOK},
		{"ready unset means ready", identity{}, http.StatusOK},
		{"not ready", identity{ready: &no}, http.StatusInternalServerError},
		{"probe error", identity{err: errors.New("backend down")}, http.StatusInternalServerError},
		{"too slow", identity{ready: &yes, delay: 500 * time.Millisecond}, http.StatusInternalServerError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "csi.sock")
			lis, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			csi.RegisterIdentityServer(srv, c.id)
			go func() { _ = srv.Serve(lis) }()
			defer srv.Stop()
			conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			p := &prober{client: csi.NewIdentityClient(conn), timeout: 200 * time.Millisecond}
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != c.want {
				t.Errorf("status %d (%s), want %d", rec.Code, rec.Body.String(), c.want)
			}
		})
	}
	t.Run("no driver", func(t *testing.T) {
		conn, err := grpc.NewClient("unix://"+filepath.Join(t.TempDir(), "none.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		p := &prober{client: csi.NewIdentityClient(conn), timeout: 200 * time.Millisecond}
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("status %d without a driver", rec.Code)
		}
	})
}
