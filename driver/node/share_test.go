package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// mountCall is one mount(8) the attachers ran through the exec seam,
// under timeout(1).
type mountCall struct {
	source, target, fstype string
	options                []string
	budget                 time.Duration // timeout's duration
}

// parseMount reads "timeout -k <grace> <budget> mount -t <type> [-o <opts>]
// <source> <target>".
func parseMount(t *testing.T, argv []string) mountCall {
	t.Helper()
	if len(argv) < 9 || argv[0] != "timeout" || argv[1] != "-k" || argv[4] != "mount" || argv[5] != "-t" {
		t.Fatalf("not a mount under timeout: %q", argv)
	}
	secs, err := strconv.ParseFloat(argv[3], 64)
	if err != nil {
		t.Fatalf("timeout duration %q: %v", argv[3], err)
	}
	c := mountCall{fstype: argv[6], budget: time.Duration(secs * float64(time.Second))}
	rest := argv[7:]
	if rest[0] == "-o" {
		c.options, rest = strings.Split(rest[1], ","), rest[2:]
	}
	if len(rest) != 2 {
		t.Fatalf("mount arguments %q", argv)
	}
	c.source, c.target = rest[0], rest[1]
	return c
}

// shareMounts answers the attachers' mounts in the command sim: each is
// recorded, handed to onMount while it "runs", and (when answer returns
// nil) mounted in the fake mounter, as the kernel would.
type shareMounts struct {
	calls   []mountCall
	onMount func(c mountCall)
	answer  func(c mountCall) error
}

func newShareFixture(t *testing.T) (*attachFixture, *shareMounts) {
	f := newAttachFixture(t)
	if err := os.MkdirAll(f.tree.path("tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	sm := &shareMounts{}
	f.sim.on("timeout", func(argv []string) (string, error) {
		c := parseMount(t, argv)
		sm.calls = append(sm.calls, c)
		if sm.onMount != nil {
			sm.onMount(c)
		}
		if sm.answer != nil {
			if err := sm.answer(c); err != nil {
				return "", err
			}
		}
		return "", f.mounter.Mount(c.source, c.target, c.fstype, c.options)
	})
	return f, sm
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
		wantSensitive []string // after wantOpts in -o, and never logged
	}{
		{
			name:       "nfs with capability and secret flags, deduplicated",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "10.0.0.5", volumecontext.KeyShare: "/tank/k8s/pvc-1"},
			secrets:    map[string]string{SecretMountFlags: "nolock, nfsvers=3,nolock"},
			c:          withFlags(mountCap(mnmw), "nfsvers=3", "noatime", "nfsvers=3"),
			wantSource: "10.0.0.5:/tank/k8s/pvc-1", wantType: "nfs",
			wantOpts: []string{"nfsvers=3", "noatime", "defaults", "nosharecache"}, wantSensitive: []string{"nolock"},
		},
		{
			// nfs.go nfsUnshared: the user's choice stands, either way.
			name:       "nfs with sharecache asked for in the StorageClass",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "10.0.0.5", volumecontext.KeyShare: "/export/k8s/v/pvc-1"},
			c:          withFlags(mountCap(mnmw), "sharecache"),
			wantSource: "10.0.0.5:/export/k8s/v/pvc-1", wantType: "nfs", wantOpts: []string{"sharecache", "defaults"},
		},
		{
			name:       "nfs whose secret flags turn the cache sharing off already, not twice",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "10.0.0.5", volumecontext.KeyShare: "/export/k8s/v/pvc-1"},
			secrets:    map[string]string{SecretMountFlags: "nosharecache"},
			c:          mountCap(mnmw),
			wantSource: "10.0.0.5:/export/k8s/v/pvc-1", wantType: "nfs", wantOpts: []string{"defaults"}, wantSensitive: []string{"nosharecache"},
		},
		{
			name:       "nfs4 over IPv6",
			vc:         map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "fd00::5", volumecontext.KeyShare: "/export"},
			c:          func() *csi.VolumeCapability { c := mountCap(mnmw); c.GetMount().FsType = "nfs4"; return c }(),
			wantSource: "[fd00::5]:/export", wantType: "nfs4", wantOpts: []string{"defaults", "nosharecache"},
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
			if want := append(slices.Clone(tt.wantOpts), tt.wantSensitive...); c.source != tt.wantSource || c.fstype != tt.wantType ||
				c.target != f.staging || !slices.Equal(opts, want) {
				t.Fatalf("mount %+v\nwant source %q type %q options %q", c, tt.wantSource, tt.wantType, want)
			}
			for _, secret := range tt.wantSensitive {
				if strings.Contains(f.logs.String(), secret) {
					t.Fatalf("sensitive mount option %q logged:\n%s", secret, f.logs)
				}
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

// nfsAt is an nfs volume_context on the test server.
func nfsAt() map[string]string {
	return map[string]string{volumecontext.KeyAttachDriver: "nfs", volumecontext.KeyServer: "10.0.0.5", volumecontext.KeyShare: "/export/pvc-1"}
}

// TestShareMountDeadline: the mount's timeout(1) budget comes from the
// call's deadline (or the node's command timeout without one); a mount
// that timeout stops is DEADLINE_EXCEEDED (UNAVAILABLE at the command
// timeout) naming server and share, and nothing is mounted.
func TestShareMountDeadline(t *testing.T) {
	t.Run("at the call's deadline", func(t *testing.T) {
		f, sm := newShareFixture(t)
		sm.answer = func(mountCall) error { return exit(124) } // timeout stopped it
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := f.svc.NodeStageVolume(ctx, f.stageCtx(nfsAt(), mountCap(mnmw)))
		wantCode(t, err, codes.DeadlineExceeded)
		msg := status.Convert(err).Message()
		for _, want := range []string{"server 10.0.0.5", "share /export/pvc-1", "the call's deadline", "the mount was stopped"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("message %q does not say %q", msg, want)
			}
		}
		if len(sm.calls) != 1 || sm.calls[0].budget <= 2*time.Second || sm.calls[0].budget >= 3*time.Second {
			t.Fatalf("mounts %+v: want one whose budget ends before the 3s deadline", sm.calls)
		}
		if mounted, _ := f.mounter.IsMountPoint(f.staging); mounted {
			t.Fatal("staging path mounted after a stopped mount")
		}
	})
	t.Run("at the node's command timeout", func(t *testing.T) {
		f, sm := newShareFixture(t)
		sm.answer = func(mountCall) error { return exit(137) } // timeout needed SIGKILL
		_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(nfsAt(), mountCap(mnmw)))
		wantCode(t, err, codes.Unavailable)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "server 10.0.0.5") || !strings.Contains(msg, "command timeout") {
			t.Fatalf("message %q", msg)
		}
		if len(sm.calls) != 1 || sm.calls[0].budget < DefaultCommandTimeout-3*time.Second || sm.calls[0].budget >= DefaultCommandTimeout {
			t.Fatalf("mounts %+v: want a budget just under %v", sm.calls, DefaultCommandTimeout)
		}
	})
	t.Run("a failing mount is no timeout", func(t *testing.T) {
		f, sm := newShareFixture(t)
		sm.answer = func(mountCall) error { return exit(32) }
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := f.svc.NodeStageVolume(ctx, f.stageCtx(nfsAt(), mountCap(mnmw)))
		wantCode(t, err, codes.Internal)
	})
}

// TestShareMountKilledAtDeadline runs the real timeout(1) over a mount(8)
// that never returns and whose helper child never returns either (as
// mount.nfs under mount does with a server that does not answer): the
// call returns at its deadline with DEADLINE_EXCEEDED naming server and
// share, and neither process is left running.
func TestShareMountKilledAtDeadline(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("coreutils' timeout is not installed")
	}
	bin := t.TempDir()
	pids := filepath.Join(bin, "pids")
	script := "#!/bin/sh\n" +
		"sleep 300 &\n" + // the helper
		"echo $$ $! > " + pids + "\n" +
		"wait\n"
	if err := os.WriteFile(filepath.Join(bin, "mount"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	f := newFixture(t, func(o *Options) { o.Exec = nil }) // the real exec
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging,
		VolumeCapability: mountCap(mnmw), VolumeContext: nfsAt()})
	took := time.Since(start)
	wantCode(t, err, codes.DeadlineExceeded)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "server 10.0.0.5") || !strings.Contains(msg, "share /export/pvc-1") {
		t.Fatalf("message %q does not name server and share", msg)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("returned after %v, past the 1.5s deadline", took)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatalf("the fake mount never ran: %v", err)
	}
	for _, pid := range strings.Fields(string(b)) {
		deadline := time.Now().Add(2 * time.Second)
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %s (of %q) still runs after the call returned", pid, strings.TrimSpace(string(b)))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// running reports whether a process exists and is not a zombie.
func running(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
