package node

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// recordingMounter is the fake mounter that also keeps each mount's
// sensitive options apart and lets a test look at the host while a mount
// runs (the SMB credentials file exists only then).
type recordingMounter struct {
	*mount.FakeMounter
	calls   []mountCall
	onMount func(c mountCall)
}

type mountCall struct {
	source, target, fstype string
	options, sensitive     []string
}

func (r *recordingMounter) Mount(source, target, fstype string, options []string) error {
	return r.MountSensitive(source, target, fstype, options, nil)
}

func (r *recordingMounter) MountSensitive(source, target, fstype string, options, sensitive []string) error {
	c := mountCall{source, target, fstype, slices.Clone(options), slices.Clone(sensitive)}
	r.calls = append(r.calls, c)
	if r.onMount != nil {
		r.onMount(c)
	}
	return r.FakeMounter.MountSensitive(source, target, fstype, options, sensitive)
}

func newShareFixture(t *testing.T) (*attachFixture, *recordingMounter) {
	rm := &recordingMounter{FakeMounter: mount.NewFakeMounter(nil)}
	f := newAttachFixture(t, func(o *Options) { o.Mounter = rm })
	f.mounter = rm.FakeMounter
	if err := os.MkdirAll(f.tree.path("tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	return f, rm
}

func TestShareAttachers(t *testing.T) {
	withFlags := func(c *csi.VolumeCapability, flags ...string) *csi.VolumeCapability {
		c.GetMount().MountFlags = flags
		return c
	}
	tests := []struct {
		name          string
		vc            map[string]string
		secrets       map[string]string
		c             *csi.VolumeCapability
		wantSource    string
		wantType      string
		wantOpts      []string // exactly, with a credentials file shown as "credentials="
		wantSensitive []string
	}{
		{
			name:       "nfs with capability and secret flags, deduplicated",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "10.0.0.5", volumecontext.KeyShare: "/tank/k8s/pvc-1"},
			secrets:    map[string]string{SecretMountFlags: "nolock, nfsvers=3,nolock"},
			c:          withFlags(mountCap(mnmw), "nfsvers=3", "noatime", "nfsvers=3"),
			wantSource: "10.0.0.5:/tank/k8s/pvc-1", wantType: "nfs",
			wantOpts: []string{"nfsvers=3", "noatime", "defaults"}, wantSensitive: []string{"nolock"},
		},
		{
			name:       "nfs4 over IPv6",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "fd00::5", volumecontext.KeyShare: "/export"},
			c:          func() *csi.VolumeCapability { c := mountCap(mnmw); c.GetMount().FsType = "nfs4"; return c }(),
			wantSource: "[fd00::5]:/export", wantType: "nfs4", wantOpts: []string{"defaults"},
		},
		{
			name:       "smb as guest with the pod's fsGroup",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "smb", volumecontext.KeyServer: "files.example", volumecontext.KeyShare: "tank_k8s_pvc-1"},
			c:          func() *csi.VolumeCapability { c := mountCap(mnmw); c.GetMount().VolumeMountGroup = "2000"; return c }(),
			wantSource: "//files.example/tank_k8s_pvc-1", wantType: "cifs",
			wantOpts: []string{"defaults", "guest", "gid=2000"},
		},
		{
			name:       "smb with credentials from the secrets",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "smb", volumecontext.KeyServer: "files.example", volumecontext.KeyShare: "/share"},
			secrets:    map[string]string{SecretUsername: "alice", SecretPassword: "pa55-w0rd", SecretDomain: "CORP", SecretMountFlags: "vers=3.0"},
			c:          mountCap(mnmw),
			wantSource: "//files.example/share", wantType: "cifs",
			wantOpts: []string{"defaults", "credentials="}, wantSensitive: []string{"vers=3.0"},
		},
		{
			name:       "smb with a username in the mount flags is no guest",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "smb", volumecontext.KeyServer: "files.example", volumecontext.KeyShare: "share"},
			secrets:    map[string]string{SecretMountFlags: "username=bob,password=x"},
			c:          mountCap(mnmw),
			wantSource: "//files.example/share", wantType: "cifs",
			wantOpts: []string{"defaults"}, wantSensitive: []string{"username=bob", "password=x"},
		},
		{
			name:       "lustre",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "lustre", volumecontext.KeyServer: "10.0.0.5@tcp", volumecontext.KeyShare: "/lfs"},
			c:          withFlags(mountCap(mnmw), "flock"),
			wantSource: "10.0.0.5@tcp:/lfs", wantType: "lustre", wantOpts: []string{"flock", "defaults"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, rm := newShareFixture(t)
			var creds string
			var credsMode os.FileMode
			rm.onMount = func(c mountCall) {
				for _, o := range c.options {
					if p, ok := strings.CutPrefix(o, "credentials="); ok {
						b, err := os.ReadFile(p)
						fi, _ := os.Stat(p)
						if err != nil {
							t.Errorf("credentials file: %v", err)
							return
						}
						creds, credsMode = string(b), fi.Mode().Perm()
					}
				}
			}
			r := f.stageCtx(tt.vc, tt.c)
			r.Secrets = tt.secrets
			f.mustStage(t, r)
			if len(rm.calls) != 1 {
				t.Fatalf("%d mounts, want 1: %+v", len(rm.calls), rm.calls)
			}
			c := rm.calls[0]
			opts := slices.Clone(c.options)
			for i, o := range opts {
				if strings.HasPrefix(o, "credentials=") {
					opts[i] = "credentials="
				}
			}
			if c.source != tt.wantSource || c.fstype != tt.wantType || c.target != f.staging ||
				!slices.Equal(opts, tt.wantOpts) || !slices.Equal(c.sensitive, tt.wantSensitive) {
				t.Fatalf("mount %+v\nwant source %q type %q options %q sensitive %q", c, tt.wantSource, tt.wantType, tt.wantOpts, tt.wantSensitive)
			}
			if pw := tt.secrets[SecretPassword]; pw != "" {
				if creds != "username=alice\npassword="+pw+"\ndomain=CORP\n" || credsMode != 0o600 {
					t.Fatalf("credentials file %q mode %v", creds, credsMode)
				}
				if left, _ := os.ReadDir(f.tree.path("tmp")); len(left) != 0 {
					t.Fatalf("credentials file left behind: %v", left)
				}
				if strings.Contains(f.logs.String(), pw) {
					t.Fatal("password logged")
				}
			}
			// A retry finds the share mounted and does nothing.
			f.mustStage(t, r)
			if len(rm.calls) != 1 {
				t.Fatalf("restage mounted again: %+v", rm.calls)
			}
		})
	}
}

func TestShareAttacherRefusals(t *testing.T) {
	nfs := func() map[string]string {
		return map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "10.0.0.5", volumecontext.KeyShare: "/export"}
	}
	tests := []struct {
		name    string
		vc      map[string]string
		c       *csi.VolumeCapability
		prep    func(f *attachFixture)
		code    codes.Code
		mention string
	}{
		{"no server", map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyShare: "/export"}, mountCap(mnmw), nil, codes.InvalidArgument, `"server"`},
		{"no share", map[string]string{volumecontext.KeyAttachDriver: "smb", volumecontext.KeyServer: "x"}, mountCap(mnmw), nil, codes.InvalidArgument, `"share"`},
		{"block access", nfs(), blockCap(mnmw), nil, codes.InvalidArgument, "access type block"},
		{"foreign fs type", nfs(), func() *csi.VolumeCapability { c := mountCap(mnmw); c.GetMount().FsType = "ext4"; return c }(), nil, codes.InvalidArgument, `"ext4"`},
		{"smb password with a line break", map[string]string{volumecontext.KeyAttachDriver: "smb", volumecontext.KeyServer: "x", volumecontext.KeyShare: "s"}, mountCap(mnmw), nil, codes.InvalidArgument, `"password"`},
		{"another share already mounted", nfs(), mountCap(mnmw), func(f *attachFixture) {
			if err := os.MkdirAll(f.staging, 0o750); err != nil {
				t.Fatal(err)
			}
			f.mounter.MountPoints = append(f.mounter.MountPoints, mount.MountPoint{Device: "10.0.0.6:/other", Path: f.staging, Type: "nfs"})
		}, codes.AlreadyExists, "10.0.0.6:/other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newShareFixture(t)
			if tt.prep != nil {
				tt.prep(f)
			}
			r := f.stageCtx(tt.vc, tt.c)
			r.Secrets = map[string]string{SecretPassword: "a\nusername=root"}
			_, err := f.svc.NodeStageVolume(context.Background(), r)
			wantCode(t, err, tt.code)
			if msg := status.Convert(err).Message(); !strings.Contains(msg, tt.mention) {
				t.Fatalf("message %q does not mention %q", msg, tt.mention)
			}
		})
	}
}

func TestNormalizedSecrets(t *testing.T) {
	v := &Volume{
		Context: map[string]string{"provisioner_driver": "freenas-api-nfs", "provisioner_driver_instance_id": "nas-1"},
		Secrets: map[string]string{
			"mount_flags":                                "plain",
			"democratic-csi.org/mount_flags":             "generic",
			"democratic-csi.org/freenas-api-nfs/other":   "driver",
			"democratic-csi.org/zfs-generic-nfs/ignored": "another driver's",
			"democratic-csi.org/nas-1/mount_flags":       "instance",
		},
	}
	got := normalizedSecrets(v)
	want := map[string]string{"mount_flags": "instance", "other": "driver"}
	if len(got) != len(want) || got["mount_flags"] != want["mount_flags"] || got["other"] != want["other"] {
		t.Fatalf("normalizedSecrets = %v, want %v", got, want)
	}
}
