package zfsgeneric_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

var ctx = context.Background()

func startHost(t testing.TB, o zfshost.Options) *zfshost.Host {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	h, err := zfshost.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// genericConfig is h's config for driver with volumes under tank/k8s/v;
// zfsExtra is added to its zfs section.
func genericConfig(h *zfshost.Host, driver, zfsExtra string) string {
	return h.DriverConfig(driver, "v", zfsExtra)
}

func newDriver(t testing.TB, yaml string) backend.Driver {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	d, err := zfsgeneric.New(backend.Options{File: "test.yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func mountCaps() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}}
}

func createReq(name string, size int64) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: size}}
}

// zfsLines runs a zfs command on the model and returns its output lines.
func zfsLines(t testing.TB, h *zfshost.Host, args ...string) []string {
	t.Helper()
	var out, errb strings.Builder
	if code := h.Model.ZFS(args, nil, &out, &errb); code != 0 {
		if strings.Contains(errb.String(), "does not exist") {
			return nil
		}
		t.Fatalf("zfs %v: %d %s", args, code, errb.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
