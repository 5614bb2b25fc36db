package infinia

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

const acctKey = "clu1/red/csiAccount"

func parseYAML(t *testing.T, doc string) config.Tree {
	t.Helper()
	tree, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// accountYAML is a one-account config for the fake at url; extra lines
// are added to the account's section.
func accountYAML(url string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "driver: infinia-nvmeof\naccounts:\n  %s:\n    apis: [%s]\n    password: pw-1234\n", acctKey, url)
	for _, e := range extra {
		b.WriteString("    " + e + "\n")
	}
	return b.String()
}

func newTestDriver(t *testing.T, doc string, parse func(string) (backend.NodeIdentity, error)) *Driver {
	t.Helper()
	d, err := New(backend.Options{Config: parseYAML(t, doc), ParseNodeID: parse, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// nqnParser reads node ids of the form n=<name>/v=<nqn>, like the proxy's.
func nqnParser(id string) (backend.NodeIdentity, error) {
	var out backend.NodeIdentity
	for part := range strings.SplitSeq(id, "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return out, fmt.Errorf("part %q is not <code>=<value>", part)
		}
		switch k {
		case "n":
			out.Name = v
		case "v":
			out.NQN = v
		}
	}
	return out, nil
}

var (
	mountRWO = &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	mountRWX = &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}
	blockRWX = &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}
)

func createReq(name string, size int64, params map[string]string) *csi.CreateVolumeRequest {
	if params == nil {
		params = map[string]string{"service": "red/csiService"}
	}
	return &csi.CreateVolumeRequest{Name: name, Parameters: params,
		CapacityRange:      &csi.CapacityRange{RequiredBytes: size},
		VolumeCapabilities: []*csi.VolumeCapability{mountRWO}}
}

func mustCreate(t *testing.T, d *Driver, name string, size int64) *csi.Volume {
	t.Helper()
	resp, err := d.CreateVolume(context.Background(), createReq(name, size, nil))
	if err != nil {
		t.Fatalf("CreateVolume(%s): %v", name, err)
	}
	return resp.GetVolume()
}

// wantCode fails unless err is a status with code whose message contains
// every fragment.
func wantCode(t *testing.T, err error, code codes.Code, fragments ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	for _, f := range fragments {
		if !strings.Contains(status.Convert(err).Message(), f) {
			t.Errorf("message %q lacks %q", status.Convert(err).Message(), f)
		}
	}
}
