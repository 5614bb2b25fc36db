package nodemanual_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"
	testingexec "k8s.io/utils/exec/testing"

	"github.com/switchyard-csi/switchyard/driver/node"
)

// newNode is a node service with a fake mounter and an exec that lets
// mounts (mount(8) under timeout(1)) succeed and records them; any other
// command fails the test (none must run, for share mounts and bad input).
func newNode(t *testing.T) (*node.Service, *mounts) {
	t.Helper()
	m := &mounts{}
	fe := &testingexec.FakeExec{}
	for range 10 {
		fe.CommandScript = append(fe.CommandScript, func(cmd string, args ...string) utilexec.Cmd {
			argv := append([]string{cmd}, args...)
			fc := &testingexec.FakeCmd{CombinedOutputScript: []testingexec.FakeAction{func() ([]byte, []byte, error) {
				i := slices.Index(argv, "mount")
				if cmd != "timeout" || i < 0 || len(argv) < i+5 || argv[i+1] != "-t" {
					t.Errorf("unexpected host command %q", argv)
					return nil, nil, testingexec.FakeExitError{Status: 127}
				}
				c := mountCmd{fstype: argv[i+2], source: argv[len(argv)-2]}
				if argv[i+3] == "-o" {
					c.options = strings.Split(argv[i+4], ",")
				}
				m.calls = append(m.calls, c)
				return nil, nil, nil
			}}}
			return testingexec.InitFakeCmd(fc, cmd, args...)
		})
	}
	svc, err := node.NewService(node.Options{
		Mounter: mount.NewFakeMounter(nil), Exec: fe, StateDir: filepath.Join(t.TempDir(), "state"), Logger: slog.New(slog.DiscardHandler),
		NodeInfo: func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "n1"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, m
}

// mounts are the mount commands a node service ran.
type mounts struct{ calls []mountCmd }

type mountCmd struct {
	source, fstype string
	options        []string
}

func pvCap(fsType string, mode csi.VolumeCapability_AccessMode_Mode, flags ...string) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType, MountFlags: flags}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

// TestDemocraticCSIExamplePVs stages the PersistentVolumes of
// democratic-csi's examples/node-manual-{nfs,smb}-pv.yaml (placeholders
// filled in) as the kubelet passes them: volumeAttributes as
// volume_context, mountOptions as mount flags, fsType as fs_type.
func TestDemocraticCSIExamplePVs(t *testing.T) {
	rwx := csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	tests := []struct {
		name       string
		attrs      map[string]string
		c          *csi.VolumeCapability
		wantSource string
		wantType   string
		wantOpts   []string
	}{
		{
			name:       "node-manual-nfs-pv.yaml",
			attrs:      map[string]string{"server": "10.0.0.5", "share": "/some/share", "node_attach_driver": "nfs", "provisioner_driver": "node-manual"},
			c:          pvCap("nfs", rwx, "nfsvers=3", "nolock", "noatime"),
			wantSource: "10.0.0.5:/some/share", wantType: "nfs", wantOpts: []string{"nfsvers=3", "nolock", "noatime"},
		},
		{
			name:       "node-manual-smb-pv.yaml",
			attrs:      map[string]string{"server": "files.example", "share": "someshare", "node_attach_driver": "smb", "provisioner_driver": "node-manual"},
			c:          pvCap("cifs", rwx, "username=foo", "password=bar"),
			wantSource: "//files.example/someshare", wantType: "cifs",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, fm := newNode(t)
			staging := filepath.Join(t.TempDir(), "staging")
			_, err := svc.NodeStageVolume(context.Background(), &csi.NodeStageVolumeRequest{
				VolumeId: "unique-volumeid", StagingTargetPath: staging, VolumeCapability: tt.c, VolumeContext: tt.attrs})
			if err != nil {
				t.Fatalf("NodeStageVolume: %v", err)
			}
			if len(fm.calls) != 1 || fm.calls[0].source != tt.wantSource || fm.calls[0].fstype != tt.wantType {
				t.Fatalf("mounts %+v, want %s as %s", fm.calls, tt.wantSource, tt.wantType)
			}
			for _, o := range tt.wantOpts {
				if !slices.Contains(fm.calls[0].options, o) {
					t.Errorf("mount options %v lack %s", fm.calls[0].options, o)
				}
			}
		})
	}
}

// TestStaticPVMissingAttribute: a hand-written PV without a required
// attribute fails NodeStageVolume with INVALID_ARGUMENT naming it, and no
// host command runs (the fake exec fails the test on any but a mount, and no mount is recorded).
func TestStaticPVMissingAttribute(t *testing.T) {
	rwo := csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	tests := []struct {
		attrs map[string]string
		want  string
	}{
		{map[string]string{"share": "/x", "node_attach_driver": "nfs", "provisioner_driver": "node-manual"}, "server"},
		{map[string]string{"server": "files", "node_attach_driver": "smb"}, "share"},
		{map[string]string{"server": "10.0.0.1@tcp", "node_attach_driver": "lustre"}, "share"},
		{map[string]string{"portal": "10.0.0.5:3260", "lun": "0", "node_attach_driver": "iscsi"}, "iqn"},
		{map[string]string{"iqn": "iqn.2005-10.org.freenas.ctl:x", "lun": "0", "node_attach_driver": "iscsi"}, "portal"},
		{map[string]string{"transport": "tcp://10.0.0.5:4420", "nsid": "1", "node_attach_driver": "nvmeof"}, "nqn"},
		{map[string]string{"nqn": "nqn.2011-06.com.truenas:x", "transport": "tcp://10.0.0.5:4420", "node_attach_driver": "nvmeof"}, "nsid"},
		{map[string]string{"server": "10.0.0.5", "share": "/x", "provisioner_driver": "node-manual"}, "node_attach_driver"},
	}
	for _, tt := range tests {
		svc, ran := newNode(t)
		fs := "ext4"
		if tt.attrs["node_attach_driver"] == "nfs" || tt.attrs["node_attach_driver"] == "smb" || tt.attrs["node_attach_driver"] == "lustre" {
			fs = ""
		}
		_, err := svc.NodeStageVolume(context.Background(), &csi.NodeStageVolumeRequest{
			VolumeId: "pv-1", StagingTargetPath: filepath.Join(t.TempDir(), "staging"), VolumeCapability: pvCap(fs, rwo), VolumeContext: tt.attrs})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want INVALID_ARGUMENT naming %s", tt.attrs, err, tt.want)
		}
		if len(ran.calls) != 0 {
			t.Errorf("%v: mounted %+v despite the missing attribute", tt.attrs, ran.calls)
		}
	}
}
