package node

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func TestNewServiceOptions(t *testing.T) {
	info := func(context.Context) (*csi.NodeGetInfoResponse, error) { return &csi.NodeGetInfoResponse{}, nil }
	tests := []struct {
		name    string
		opts    func(dir string) Options
		wantErr string // "" = success
	}{
		{"defaults", func(d string) Options { return Options{StateDir: d, NodeInfo: info} }, ""},
		{"no state dir", func(string) Options { return Options{NodeInfo: info} }, "StateDir"},
		{"no node info", func(d string) Options { return Options{StateDir: d} }, "NodeInfo"},
		{"no stage capability", func(d string) Options {
			return Options{StateDir: d, NodeInfo: info, Capabilities: Capabilities(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS)}
		}, "STAGE_UNSTAGE_VOLUME"},
		{"unimplemented capability", func(d string) Options {
			return Options{StateDir: d, NodeInfo: info, Capabilities: Capabilities(
				csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME, csi.NodeServiceCapability_RPC_GET_STORAGE_HEALTH)}
		}, "GET_STORAGE_HEALTH"},
		{"duplicate attacher", func(d string) Options {
			return Options{StateDir: d, NodeInfo: info, Attachers: []Attacher{HostPath{}, HostPath{}}}
		}, "hostpath"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts(filepath.Join(t.TempDir(), "state"))
			opts.Mounter = mount.NewFakeMounter(nil) // never the real mounter in unit tests
			_, err := NewService(opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("NewService: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewService error = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestNodeGetCapabilitiesDefault(t *testing.T) {
	f := newFixture(t)
	resp, err := f.svc.NodeGetCapabilities(context.Background(), &csi.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range resp.GetCapabilities() {
		got = append(got, c.GetRpc().GetType().String())
	}
	want := "STAGE_UNSTAGE_VOLUME GET_VOLUME_STATS EXPAND_VOLUME SINGLE_NODE_MULTI_WRITER"
	if strings.Join(got, " ") != want {
		t.Fatalf("capabilities %v, want %s", got, want)
	}
}

func TestNodeGetInfoDelegates(t *testing.T) {
	tests := []struct {
		name     string
		info     func(context.Context) (*csi.NodeGetInfoResponse, error)
		wantCode codes.Code
		wantID   string
	}{
		{"ok", func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "worker-7"}, nil
		}, codes.OK, "worker-7"},
		{"plain error is internal", func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return nil, errors.New("boom")
		}, codes.Internal, ""},
		{"status kept", func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return nil, status.Error(codes.Unavailable, "later")
		}, codes.Unavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.NodeInfo = tt.info })
			resp, err := f.svc.NodeGetInfo(context.Background(), &csi.NodeGetInfoRequest{})
			wantCode(t, err, tt.wantCode)
			if resp.GetNodeId() != tt.wantID {
				t.Fatalf("node id %q, want %q", resp.GetNodeId(), tt.wantID)
			}
		})
	}
}

// TestRequestValidation covers every argument check: user mistakes are
// INVALID_ARGUMENT (or what the spec names), never INTERNAL, and the
// message names what to fix.
func TestRequestValidation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	okCap := mountCap(snw)
	noMode := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}}}
	noType := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: snw}}
	stage := func(mut func(r *csi.NodeStageVolumeRequest)) func() error {
		return func() error {
			r := f.stageReq(okCap)
			mut(r)
			_, err := f.svc.NodeStageVolume(ctx, r)
			return err
		}
	}
	publish := func(mut func(r *csi.NodePublishVolumeRequest)) func() error {
		return func() error {
			r := f.publishReq(f.target, okCap, false)
			mut(r)
			_, err := f.svc.NodePublishVolume(ctx, r)
			return err
		}
	}
	tests := []struct {
		name     string
		call     func() error
		want     codes.Code
		mentions []string
	}{
		{"stage no volume id", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeId = "" }), codes.InvalidArgument, []string{"volume_id"}},
		{"stage no staging path", stage(func(r *csi.NodeStageVolumeRequest) { r.StagingTargetPath = "" }), codes.InvalidArgument, []string{"staging_target_path"}},
		{"stage relative staging path", stage(func(r *csi.NodeStageVolumeRequest) { r.StagingTargetPath = "rel/dir" }), codes.InvalidArgument, []string{"absolute", "rel/dir"}},
		{"stage no capability", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = nil }), codes.InvalidArgument, []string{"volume_capability"}},
		{"stage no access mode", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = noMode }), codes.InvalidArgument, []string{"access_mode"}},
		{"stage no access type", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = noType }), codes.InvalidArgument, []string{"access_type"}},
		{"stage no attach driver", stage(func(r *csi.NodeStageVolumeRequest) { delete(r.VolumeContext, volumecontext.KeyAttachDriver) }), codes.InvalidArgument, []string{volumecontext.KeyAttachDriver, "hostpath"}},
		{"stage unknown attach driver", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeContext[volumecontext.KeyAttachDriver] = "objectivefs" }), codes.InvalidArgument, []string{`"objectivefs"`, "supported: hostpath, iscsi, lustre, nfs, nvmeof, smb, zfs-local"}},
		{"stage hostpath without path", stage(func(r *csi.NodeStageVolumeRequest) { delete(r.VolumeContext, volumecontext.KeyPath) }), codes.InvalidArgument, []string{`"path"`}},
		{"stage hostpath relative path", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeContext[volumecontext.KeyPath] = "data/v1" }), codes.InvalidArgument, []string{`"path"`, "absolute"}},
		{"stage hostpath as block", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = blockCap(snw) }), codes.InvalidArgument, []string{"block", "mount"}},
		{"publish no volume id", publish(func(r *csi.NodePublishVolumeRequest) { r.VolumeId = "" }), codes.InvalidArgument, []string{"volume_id"}},
		{"publish no target", publish(func(r *csi.NodePublishVolumeRequest) { r.TargetPath = "" }), codes.InvalidArgument, []string{"target_path"}},
		{"publish relative target", publish(func(r *csi.NodePublishVolumeRequest) { r.TargetPath = "t" }), codes.InvalidArgument, []string{"target_path", "absolute"}},
		{"publish no capability", publish(func(r *csi.NodePublishVolumeRequest) { r.VolumeCapability = nil }), codes.InvalidArgument, []string{"volume_capability"}},
		{"publish no staging path", publish(func(r *csi.NodePublishVolumeRequest) { r.StagingTargetPath = "" }), codes.FailedPrecondition, []string{"staging_target_path", "NodeStageVolume"}},
		{"publish unknown attach driver", publish(func(r *csi.NodePublishVolumeRequest) { r.VolumeContext[volumecontext.KeyAttachDriver] = "objectivefs" }), codes.InvalidArgument, []string{`"objectivefs"`}},
		{"unpublish no volume id", func() error {
			_, err := f.svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{TargetPath: f.target})
			return err
		}, codes.InvalidArgument, []string{"volume_id"}},
		{"unpublish no target", func() error {
			_, err := f.svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volID})
			return err
		}, codes.InvalidArgument, []string{"target_path"}},
		{"unstage no volume id", func() error {
			_, err := f.svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{StagingTargetPath: f.staging})
			return err
		}, codes.InvalidArgument, []string{"volume_id"}},
		{"unstage no staging path", func() error {
			_, err := f.svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volID})
			return err
		}, codes.InvalidArgument, []string{"staging_target_path"}},
		{"stats no volume id", func() error {
			_, err := f.svc.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumePath: "some/path"})
			return err
		}, codes.InvalidArgument, []string{"volume_id"}},
		{"stats no path", func() error {
			_, err := f.svc.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: volID})
			return err
		}, codes.InvalidArgument, []string{"volume_path"}},
		{"expand no volume id", func() error {
			_, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumePath: f.src})
			return err
		}, codes.InvalidArgument, []string{"volume_id"}},
		{"expand no path", func() error {
			_, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID})
			return err
		}, codes.InvalidArgument, []string{"volume_path"}},
		{"expand required over limit", func() error {
			_, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID, VolumePath: f.src,
				CapacityRange: &csi.CapacityRange{RequiredBytes: 10, LimitBytes: 5}})
			return err
		}, codes.InvalidArgument, []string{"limit_bytes"}},
		{"expand negative", func() error {
			_, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID, VolumePath: f.src,
				CapacityRange: &csi.CapacityRange{RequiredBytes: -1}})
			return err
		}, codes.InvalidArgument, []string{"negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			wantCode(t, err, tt.want)
			for _, m := range tt.mentions {
				if !strings.Contains(status.Convert(err).Message(), m) {
					t.Errorf("message %q does not mention %q", status.Convert(err).Message(), m)
				}
			}
		})
	}
	if len(f.mounter.GetLog()) != 0 {
		t.Fatalf("invalid requests touched the mount table: %v", f.mounter.GetLog())
	}
}
