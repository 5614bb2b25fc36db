package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type identity struct {
	csi.UnimplementedIdentityServer
	name string
}

func (i identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: i.name, VendorVersion: "test"}, nil
}

// serveDriver serves a CSI identity service on a unix socket after delay.
func serveDriver(t *testing.T, name string, delay time.Duration) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "csi.sock")
	srv := grpc.NewServer()
	csi.RegisterIdentityServer(srv, identity{name: name})
	go func() {
		time.Sleep(delay)
		lis, err := net.Listen("unix", sock)
		if err != nil {
			t.Error(err)
			return
		}
		_ = srv.Serve(lis)
	}()
	t.Cleanup(srv.Stop)
	return sock
}

// The driver's socket may come up after the registrar starts: it waits.
func TestDriverNameWaitsForTheDriver(t *testing.T) {
	sock := serveDriver(t, "org.example.csi", 1500*time.Millisecond)
	name, err := driverName(sock, 10*time.Second)
	if err != nil || name != "org.example.csi" {
		t.Fatalf("driverName = %q, %v", name, err)
	}
}

func TestDriverNameGivesUp(t *testing.T) {
	_, err := driverName(filepath.Join(t.TempDir(), "none.sock"), 1500*time.Millisecond)
	if err == nil {
		t.Fatal("no error without a driver")
	}
}

// What the kubelet reads: a CSI plugin of this name at the host path given.
func TestGetInfoAndRefusal(t *testing.T) {
	failed := make(chan string, 1)
	r := &registrar{name: "org.example.csi", endpoint: "/var/lib/kubelet/plugins/org.example.csi/csi.sock", failed: failed}
	info, err := r.GetInfo(context.Background(), &registration.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registration.CSIPlugin || info.Name != "org.example.csi" || info.Endpoint != r.endpoint || len(info.SupportedVersions) != 1 || info.SupportedVersions[0] != "1.0.0" {
		t.Errorf("GetInfo = %+v", info)
	}
	if _, err := r.NotifyRegistrationStatus(context.Background(), &registration.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-failed:
		t.Fatalf("a successful registration was reported as failed: %s", msg)
	default:
	}
	_, _ = r.NotifyRegistrationStatus(context.Background(), &registration.RegistrationStatus{PluginRegistered: false, Error: "version mismatch"})
	select {
	case msg := <-failed:
		if msg != "version mismatch" {
			t.Errorf("failure message %q", msg)
		}
	default:
		t.Fatal("a refused registration did not stop the registrar")
	}
}
