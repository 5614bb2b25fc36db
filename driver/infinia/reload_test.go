package infinia

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

func TestStandaloneDriverReloadsItsConfig(t *testing.T) {
	defer func(old time.Duration) { reloadEvery = old }(reloadEvery)
	reloadEvery = 50 * time.Millisecond
	f := newFake(t)
	file := filepath.Join(t.TempDir(), "config.yaml")
	write := func(doc string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(accountYAML(f.url))
	tree, err := config.LoadMain(file)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(backend.Options{File: file, Config: tree, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v := mustCreate(t, d, "pvc-1", 1<<20)

	// A broken file keeps the accounts in use.
	write("accounts: [not, a, map]\n")
	time.Sleep(2 * reloadEvery)
	if _, ok := d.accounts.Load().byKey[acctKey]; !ok {
		t.Fatal("an invalid file replaced the accounts")
	}

	// Removing the account: calls for its volumes fail, naming it.
	write("accounts:\n  clu1/other/acct: {apis: [" + f.url + "], password: x, zone: z}\n")
	waitFor(t, func() bool { _, ok := d.accounts.Load().byKey["clu1/other/acct"]; return ok })
	_, err = d.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()})
	wantCode(t, err, codes.FailedPrecondition, acctKey, file)

	// Restoring it makes them work again.
	write(accountYAML(f.url))
	waitFor(t, func() bool { _, ok := d.accounts.Load().byKey[acctKey]; return ok })
	if _, err := d.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
}

func TestDriverBehindTheProxyDoesNotWatch(t *testing.T) {
	d, err := New(backend.Options{Connection: "infinia", File: "/nonexistent.yaml",
		Config: parseYAML(t, accountYAML("https://h")), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if d.stop != nil {
		t.Fatal("a proxied driver must not watch its file: the proxy rebuilds it")
	}
	_ = d.Close()
}

func TestNewReportsProblemsWithTheFile(t *testing.T) {
	_, err := New(backend.Options{File: "/etc/cfg.yaml", Config: parseYAML(t, "accounts:\n  a/b/c: {password: x}\n")})
	if err == nil || !strings.Contains(err.Error(), "/etc/cfg.yaml: accounts.a/b/c.apis") {
		t.Fatalf("want a problem naming the file and key, got %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not reached in time")
}
