package shareclient_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"
	testingexec "k8s.io/utils/exec/testing"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/node"
	"github.com/switchyard-csi/switchyard/driver/shareclient"
)

// TestNodeMountsWhatTheControllerMade hands the volume_context of each
// client's CreateVolume to the node service and checks the mount command it
// leads to: the share path on the server, the kind's file system type. This
// is the whole of what switchyard runs for a Lustre volume on a node (no
// Lustre server can run here: the command line is the proof).
func TestNodeMountsWhatTheControllerMade(t *testing.T) {
	cases := []struct {
		driver, section, host, base string
		wantSource, wantType        string
	}{
		{"nfs-client", "nfs", "10.0.0.5", "/export/k8s", "10.0.0.5:/export/k8s/v/pvc-1", "nfs"},
		{"smb-client", "smb", "files.example", "/k8s", "//files.example/k8s/v/pvc-1", "cifs"},
		{"lustre-client", "lustre", "10.0.0.1@tcp:10.0.0.2@tcp", "/lfs/k8s", "10.0.0.1@tcp:10.0.0.2@tcp:/lfs/k8s/v/pvc-1", "lustre"},
	}
	for _, c := range cases {
		t.Run(c.driver, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := config.Tree{"driver": c.driver, c.section: map[string]any{
				"shareHost": c.host, "shareBasePath": c.base, "controllerBasePath": filepath.Join(dir, "share"), "checkControllerMount": false,
			}}
			if err := mkdir(filepath.Join(dir, "share")); err != nil {
				t.Fatal(err)
			}
			d, err := shareclient.New(c.driver, backend.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			capability := &csi.VolumeCapability{
				AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
				AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
			}
			vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: []*csi.VolumeCapability{capability}})
			if err != nil {
				t.Fatal(err)
			}
			fm := mount.NewFakeMounter(nil)
			ran := &commands{}
			svc, err := node.NewService(node.Options{
				Mounter: fm, Exec: ran.exec(), StateDir: filepath.Join(dir, "state"), Logger: slog.New(slog.DiscardHandler),
				NodeInfo: func(context.Context) (*csi.NodeGetInfoResponse, error) {
					return &csi.NodeGetInfoResponse{NodeId: "n1"}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			staging := filepath.Join(dir, "staging")
			_, err = svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{
				VolumeId: vol.GetVolume().GetVolumeId(), StagingTargetPath: staging, VolumeCapability: capability,
				VolumeContext: vol.GetVolume().GetVolumeContext(),
			})
			if err != nil {
				t.Fatalf("NodeStageVolume: %v", err)
			}
			// The node mounts through mount(8) under timeout(1), which
			// bounds it by the call's deadline.
			if len(ran.argv) != 1 {
				t.Fatalf("commands %q, want one mount", ran.argv)
			}
			argv := ran.argv[0]
			i := slices.Index(argv, "mount")
			if argv[0] != "timeout" || i < 0 || len(argv) < i+4 || argv[i+1] != "-t" || argv[i+2] != c.wantType ||
				argv[len(argv)-2] != c.wantSource || argv[len(argv)-1] != staging {
				t.Fatalf("command %q, want mount -t %s %s %s under timeout", argv, c.wantType, c.wantSource, staging)
			}
		})
	}
}

// commands is a fake exec that records each command line and lets it
// succeed (the node's only command here is the mount).
type commands struct{ argv [][]string }

func (r *commands) exec() *testingexec.FakeExec {
	fe := &testingexec.FakeExec{}
	for range 10 {
		fe.CommandScript = append(fe.CommandScript, func(cmd string, args ...string) utilexec.Cmd {
			r.argv = append(r.argv, append([]string{cmd}, args...))
			fc := &testingexec.FakeCmd{CombinedOutputScript: []testingexec.FakeAction{func() ([]byte, []byte, error) { return nil, nil, nil }}}
			return testingexec.InitFakeCmd(fc, cmd, args...)
		})
	}
	return fe
}

func mkdir(p string) error { return os.MkdirAll(p, 0o755) }
