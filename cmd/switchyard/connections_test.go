package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/assembly"
)

// row finds the listing's line for a connection, split into columns.
func row(t *testing.T, out, name string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)
		if len(f) > 0 && f[0] == name {
			return f
		}
	}
	t.Fatalf("no line for %s in:\n%s", name, out)
	return nil
}

// From the connection files: a good connection with its type, family,
// the backend's zfs version and its volume count; a file that does not
// parse, named; a backend that cannot be reached, named. Exit 1 because
// not all are well.
func TestConnectionsFromConfig(t *testing.T) {
	r := newOrphanRig(t, "nas-a", "nas-down")
	r.controller(t, func(c csipb.ControllerServer) {
		mkVolume(t, c, "nas-a", "pvc-1")
		mkVolume(t, c, "nas-a", "pvc-2")
	})
	r.hosts["nas-down"].Close()
	bad := filepath.Join(r.conns, "broken.yaml")
	r.write(t, bad, "driver: zfs-generic-nfs\nzfs: [unterminated\n")

	var out, errb bytes.Buffer
	code := connectionsCmd([]string{"--config", r.main, "--timeout", "30s"}, &out, &errb)
	t.Logf("listing:\n%s", out.String())
	if code != 1 {
		t.Fatalf("exit %d; want 1 (one file broken, one backend down)\n%s%s", code, out.String(), errb.String())
	}
	got := out.String()
	if a := row(t, got, "nas-a"); strings.Join(a, "|") != "nas-a|loaded|zfs-generic-nfs|nfs, file|zfs-2.2.7-1|2" {
		t.Errorf("nas-a: %q", a)
	}
	if b := row(t, got, "broken"); b[1] != "parse error" {
		t.Errorf("broken: %q", b)
	}
	if d := row(t, got, "nas-down"); d[1] != "unreachable" || d[2] != "zfs-generic-nfs" {
		t.Errorf("nas-down: %q", d)
	}
	for _, want := range []string{"broken: connection broken", bad, "nas-down: ", "connection refused"} {
		if !strings.Contains(got, want) {
			t.Errorf("listing lacks %q:\n%s", want, got)
		}
	}
}

// Against a running controller's socket: the volumes per connection.
func TestConnectionsFromSocket(t *testing.T) {
	r := newOrphanRig(t, "nas-a", "nas-b")
	p, err := assembly.New(assembly.Options{ConfigFile: r.main, CSIName: "org.test.switchyard", CSIVersion: "v9.9.9", Modes: []string{assembly.ModeController},
		NodeName: "n", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mkVolume(t, p.Controller, "nas-a", "pvc-1")
	mkVolume(t, p.Controller, "nas-a", "pvc-2")
	mkVolume(t, p.Controller, "nas-b", "pvc-3")
	sock := filepath.Join(t.TempDir(), "csi.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := p.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop(context.Background())

	var out, errb bytes.Buffer
	if code := connectionsCmd([]string{"--endpoint", "unix://" + sock}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	got := out.String()
	if !strings.Contains(got, "controller org.test.switchyard v9.9.9") {
		t.Errorf("no controller line:\n%s", got)
	}
	if a := row(t, got, "nas-a"); a[len(a)-1] != "2" {
		t.Errorf("nas-a: %q", a)
	}
	if b := row(t, got, "nas-b"); b[len(b)-1] != "1" {
		t.Errorf("nas-b: %q", b)
	}
}

func TestConnectionsUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"--config", "a.yaml", "--endpoint", "unix:///x"}} {
		var out, errb bytes.Buffer
		if code := connectionsCmd(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage") {
			t.Errorf("%v: exit %d: %s", args, code, errb.String())
		}
	}
}
