package node

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

const testNQN = "nqn.2011-06.com.example:tank-pvc-1"

func nvmeCtx(kv ...string) map[string]string {
	vc := map[string]string{
		volumecontext.KeyAttachDriver: "nvmeof", "provisioner_driver": "zfs-generic-nvmeof",
		volumecontext.KeyNQN: testNQN, volumecontext.KeyTransport: "tcp://10.0.0.5:4420", volumecontext.KeyNSID: "1",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(vc, kv[i])
		} else {
			vc[kv[i]] = kv[i+1]
		}
	}
	return vc
}

// nvmeTarget is a fake kernel with one reachable subsystem (testNQN, one
// 1 GiB namespace) listening on 10.0.0.5:4420 and 10.0.0.7:4420.
func nvmeTarget(f *attachFixture, native bool) *fakeNVMe {
	k := newFakeNVMe(f, native)
	k.targets[testNQN] = []fakeNS{{nsid: 1, uuid: "6f1c3a52-2b7e-4c55-9d0e-1f5b3e2a9c10", size: 1 << 30}}
	k.listeners["10.0.0.5:4420"] = true
	k.listeners["10.0.0.7:4420"] = true
	return k
}

func (f *attachFixture) mustStage(t *testing.T, r *csi.NodeStageVolumeRequest) {
	t.Helper()
	if _, err := f.svc.NodeStageVolume(context.Background(), r); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
}

func (f *attachFixture) unstage(id, staging string) error {
	_, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
	return err
}

// Every transport is connected, host names resolved (IPv4 preferred),
// default port added, ?options passed on; the native multipath head is
// formatted and mounted.
func TestNVMeoFStageConnectsEveryTransport(t *testing.T) {
	f := newAttachFixture(t)
	nvmeTarget(f, true)
	vc := nvmeCtx(volumecontext.KeyTransport, "tcp://10.0.0.5",
		volumecontext.KeyTransports, "tcp://storage.example:4420?host-iface=eth1, tcp://10.0.0.5:4420")
	f.mustStage(t, f.stageCtx(vc, mountCap(snw)))

	want := []string{
		"nvme connect --nqn " + testNQN + " --transport tcp --traddr 10.0.0.5 --trsvcid 4420",
		"nvme connect --nqn " + testNQN + " --transport tcp --traddr 10.0.0.7 --trsvcid 4420 --host-iface eth1",
	}
	if got := f.sim.lines("nvme connect"); !slices.Equal(got, want) {
		t.Fatalf("connect commands\n got %q\nwant %q", got, want)
	}
	dev := f.tree.path("dev/nvme0n1")
	if got := f.sim.lines("mkfs.ext4"); !slices.Equal(got, []string{"mkfs.ext4 -F -m0 " + dev}) {
		t.Fatalf("format: %q", got)
	}
	mp, ok := f.mountAt(f.staging)
	if !ok || mp.Device != dev || mp.Type != "ext4" {
		t.Fatalf("staging mount %+v (%t), want %s as ext4", mp, ok, dev)
	}
	// Idempotent: a second stage touches nothing.
	f.sim.reset()
	f.mustStage(t, f.stageCtx(vc, mountCap(snw)))
	if len(f.sim.ran) != 0 {
		t.Fatalf("second stage ran %q", f.sim.ran)
	}
}

// "already connected" answers from nvme-cli are success.
func TestNVMeoFAlreadyConnected(t *testing.T) {
	f := newAttachFixture(t)
	k := nvmeTarget(f, true)
	if _, err := k.connect([]string{"nvme", "connect", "--nqn", testNQN, "--transport", "tcp", "--traddr", "10.0.0.5", "--trsvcid", "4420"}); err != nil {
		t.Fatal(err)
	}
	f.mustStage(t, f.stageCtx(nvmeCtx(), mountCap(snw)))
	if n := len(f.sim.lines("nvme connect")); n != 1 {
		t.Fatalf("%d connect attempts, want 1 (already connected is success)", n)
	}
	if _, ok := f.mountAt(f.staging); !ok {
		t.Fatal("not staged")
	}
}

func TestNVMeoFNamespaceDiscovery(t *testing.T) {
	const uuid = "6f1c3a52-2b7e-4c55-9d0e-1f5b3e2a9c10"
	tests := []struct {
		name    string
		native  bool
		vc      map[string]string
		prep    func(k *fakeNVMe)
		wantDev string
		wantCmd string // a command that must have run
	}{
		{"native multipath: the subsystem's head", true, nvmeCtx(), nil, "dev/nvme0n1", ""},
		{"no native multipath: the controller's namespace", false, nvmeCtx(), nil, "dev/nvme0n1", ""},
		{"by uuid in sysfs (Infinia)", true, nvmeCtx(volumecontext.KeyNSID, "", volumecontext.KeyUUID, strings.ToUpper(uuid)), nil, "dev/nvme0n1", ""},
		{"by uuid through the udev link", false, nvmeCtx(volumecontext.KeyNSID, "", volumecontext.KeyUUID, uuid), func(k *fakeNVMe) {
			k.targets[testNQN][0].udevOnly = true
		}, "dev/nvme0n1", ""},
		{"two paths without native multipath: the dm map", false,
			nvmeCtx(volumecontext.KeyTransports, "tcp://10.0.0.7:4420"), func(k *fakeNVMe) { k.dmMultipath = true }, "dev/dm-0", ""},
		{"namespace appears after a rescan", true, nvmeCtx(), func(k *fakeNVMe) { k.hideUntilRescan = true }, "dev/nvme0n1", "nvme ns-rescan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			k := nvmeTarget(f, tt.native)
			if tt.prep != nil {
				tt.prep(k)
			}
			f.mustStage(t, f.stageCtx(tt.vc, blockCap(snw)))
			mp, ok := f.mountAt(filepath.Join(f.staging, StagedBlockDevice))
			if !ok || mp.Device != f.tree.path(tt.wantDev) || !slices.Contains(mp.Opts, "bind") {
				t.Fatalf("block_device mount %+v (%t), want a bind of %s", mp, ok, tt.wantDev)
			}
			if tt.wantCmd != "" && len(f.sim.lines(tt.wantCmd)) == 0 {
				t.Fatalf("%q did not run: %q", tt.wantCmd, f.sim.ran)
			}
			if len(f.sim.lines("mkfs.ext4")) != 0 {
				t.Fatal("a block volume was formatted")
			}
		})
	}
}

// The subsystem is disconnected only by the last staged volume using it.
func TestNVMeoFDisconnectOnlyWhenUnused(t *testing.T) {
	f := newAttachFixture(t)
	k := nvmeTarget(f, true)
	k.targets[testNQN] = append(k.targets[testNQN], fakeNS{nsid: 2, uuid: "0d9e2c1b-0000-4000-8000-000000000002", size: 1 << 30})
	stgA, stgB := filepath.Join(f.root, "stg-a"), filepath.Join(f.root, "stg-b")
	f.mustStage(t, &csi.NodeStageVolumeRequest{VolumeId: "vol-a", StagingTargetPath: stgA, VolumeCapability: mountCap(snw), VolumeContext: nvmeCtx()})
	f.mustStage(t, &csi.NodeStageVolumeRequest{VolumeId: "vol-b", StagingTargetPath: stgB, VolumeCapability: mountCap(snw), VolumeContext: nvmeCtx(volumecontext.KeyNSID, "2")})

	if err := f.unstage("vol-a", stgA); err != nil {
		t.Fatalf("unstage a: %v", err)
	}
	if got := f.sim.lines("nvme disconnect"); len(got) != 0 {
		t.Fatalf("disconnected while vol-b still uses the subsystem: %q", got)
	}
	if !strings.Contains(f.logs.String(), "another volume on this node uses it") {
		t.Errorf("the kept connection is not logged: %s", f.logs.String())
	}
	if err := f.unstage("vol-b", stgB); err != nil {
		t.Fatalf("unstage b: %v", err)
	}
	if got := f.sim.lines("nvme disconnect"); !slices.Equal(got, []string{"nvme disconnect --nqn " + testNQN}) {
		t.Fatalf("disconnect commands %q", got)
	}
	if f.svc.host.nvmeSubsystemByNQN(testNQN) != nil {
		t.Fatal("subsystem still connected")
	}
}

// A target that vanished while staged does not block unstage.
func TestNVMeoFUnstageAfterTargetVanished(t *testing.T) {
	tests := []struct {
		name           string
		vanish         func(f *attachFixture, k *fakeNVMe)
		wantDisconnect bool
	}{
		{"kernel gave up and removed the controllers", func(_ *attachFixture, k *fakeNVMe) {
			k.dropSubsystem(testNQN, k.subsys[testNQN])
		}, false},
		{"controller still reconnecting", func(f *attachFixture, _ *fakeNVMe) {
			f.tree.file("sys/class/nvme/nvme0/state", "connecting\n")
		}, true},
		{"disconnect fails because the controller went meanwhile", func(f *attachFixture, k *fakeNVMe) {
			f.sim.on("nvme disconnect", func([]string) (string, error) {
				k.dropSubsystem(testNQN, k.subsys[testNQN])
				return "Failed to disconnect: No such device\n", exit(1)
			})
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			k := nvmeTarget(f, true)
			f.mustStage(t, f.stageCtx(nvmeCtx(), mountCap(snw)))
			tt.vanish(f, k)
			if err := f.unstage(volID, f.staging); err != nil {
				t.Fatalf("unstage: %v", err)
			}
			if got := len(f.sim.lines("nvme disconnect")) > 0; got != tt.wantDisconnect {
				t.Fatalf("disconnect ran: %t, want %t", got, tt.wantDisconnect)
			}
			if rec, _ := f.svc.store.load(volID); rec != nil {
				t.Fatal("record left")
			}
		})
	}
}

func TestNVMeoFUnstageDisconnectFailure(t *testing.T) {
	f := newAttachFixture(t)
	nvmeTarget(f, true)
	f.mustStage(t, f.stageCtx(nvmeCtx(), mountCap(snw)))
	f.sim.reply("nvme disconnect", "Failed to disconnect: Device or resource busy\n", exit(1))
	err := f.unstage(volID, f.staging)
	wantCode(t, err, codes.Internal)
	for _, s := range []string{testNQN, "Device or resource busy"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if rec, _ := f.svc.store.load(volID); rec == nil {
		t.Fatal("record dropped although the subsystem is still connected")
	}
}

func TestNVMeoFConnectFailures(t *testing.T) {
	t.Run("refused on every transport", func(t *testing.T) {
		f := newAttachFixture(t)
		nvmeTarget(f, true)
		_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(nvmeCtx(volumecontext.KeyTransport, "tcp://10.0.0.9:4420"), mountCap(snw)))
		wantCode(t, err, codes.Internal)
		for _, s := range []string{testNQN, "tcp://10.0.0.9:4420", "Connection refused", volID} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
		if n := len(f.sim.lines("nvme connect")); n != 3 {
			t.Fatalf("%d connect attempts, want 3 (retried)", n)
		}
	})
	t.Run("one of two transports down: staged over the other", func(t *testing.T) {
		f := newAttachFixture(t)
		nvmeTarget(f, true)
		f.mustStage(t, f.stageCtx(nvmeCtx(volumecontext.KeyTransports, "tcp://10.0.0.9:4420"), mountCap(snw)))
		if !strings.Contains(f.logs.String(), "10.0.0.9") {
			t.Errorf("the failed transport is not logged")
		}
	})
	t.Run("timeout names the nqn and the transport", func(t *testing.T) {
		f := newAttachFixture(t, func(o *Options) { o.CommandTimeout = 20 * time.Millisecond })
		nvmeTarget(f, true)
		f.sim.on("nvme connect", func([]string) (string, error) {
			time.Sleep(200 * time.Millisecond) // the real command would be killed here
			return "", exit(1)
		})
		_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(nvmeCtx(), mountCap(snw)))
		wantCode(t, err, codes.Internal)
		for _, s := range []string{"timed out", testNQN, "tcp://10.0.0.5:4420"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
		if n := len(f.sim.lines("nvme connect")); n != 1 {
			t.Fatalf("%d connect attempts, want 1: a hung connect is not retried", n)
		}
	})
	t.Run("connected but the namespace never appears", func(t *testing.T) {
		f := newAttachFixture(t)
		nvmeTarget(f, true)
		_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(nvmeCtx(volumecontext.KeyNSID, "9"), mountCap(snw)))
		wantCode(t, err, codes.Internal)
		if !strings.Contains(err.Error(), "namespace 9 of "+testNQN) {
			t.Fatalf("error %q does not name the namespace", err)
		}
	})
}

func TestNVMeoFValidation(t *testing.T) {
	tests := []struct {
		name    string
		vc      map[string]string
		c       *csi.VolumeCapability
		mention string
	}{
		{"no nqn", nvmeCtx(volumecontext.KeyNQN, ""), mountCap(snw), `"nqn"`},
		{"no transport", nvmeCtx(volumecontext.KeyTransport, ""), mountCap(snw), `"transport"`},
		{"no nsid nor uuid", nvmeCtx(volumecontext.KeyNSID, ""), mountCap(snw), `"nsid"`},
		{"nsid 0", nvmeCtx(volumecontext.KeyNSID, "0"), mountCap(snw), "nsid"},
		{"unknown transport type", nvmeCtx(volumecontext.KeyTransport, "iscsi://10.0.0.5"), mountCap(snw), "unknown transport type"},
		{"bad transport option", nvmeCtx(volumecontext.KeyTransport, "tcp://10.0.0.5?;rm=1"), mountCap(snw), "option"},
		{"filesystem on several nodes", nvmeCtx(), mountCap(mnmw), "MULTI_NODE_MULTI_WRITER"},
		{"bad perms", nvmeCtx(volumecontext.KeyPerms, "rwx"), mountCap(snw), "perms"},
		{"bad owner", nvmeCtx(volumecontext.KeyOwnerUID, "alice"), mountCap(snw), "owneruid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(tt.vc, tt.c))
			wantCode(t, err, codes.InvalidArgument)
			if msg := status.Convert(err).Message(); !strings.Contains(msg, tt.mention) {
				t.Fatalf("message %q does not mention %q", msg, tt.mention)
			}
			if len(f.sim.ran) != 0 {
				t.Fatalf("an invalid request ran %q", f.sim.ran)
			}
		})
	}
}

func TestParseNVMeTransport(t *testing.T) {
	tests := []struct {
		in      string
		want    string // connect args after "connect --nqn N"
		wantErr string
	}{
		{"tcp://10.0.0.5", "--transport tcp --traddr 10.0.0.5 --trsvcid 4420", ""},
		{"tcp://10.0.0.5:4421/", "--transport tcp --traddr 10.0.0.5 --trsvcid 4421", ""},
		{"tcp://[fd00::5]:4420", "--transport tcp --traddr fd00::5 --trsvcid 4420", ""},
		{"TCP://10.0.0.5?nr-io-queues=4&host-iface=eth1", "--transport tcp --traddr 10.0.0.5 --trsvcid 4420 --host-iface eth1 --nr-io-queues 4", ""},
		{"tcp://10.0.0.5?--duplicate-connect", "--transport tcp --traddr 10.0.0.5 --trsvcid 4420 --duplicate-connect", ""},
		{"rdma://10.0.0.5:4420", "--transport rdma --traddr 10.0.0.5 --trsvcid 4420", ""},
		{"fc://[nn-0x20000090fa:pn-0x10000090fa]", "--transport fc --traddr nn-0x20000090fa:pn-0x10000090fa", ""},
		{"10.0.0.5:4420", "", "expected <type>://"},
		{"tcp://10.0.0.5:99999", "", "bad port"},
		{"tcp://", "", "no address"},
		{"loop://x", "", "unknown transport type"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tr, err := parseNVMeTransport(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(tr.connectArgs("N")[3:], " ")
			if got != tt.want {
				t.Fatalf("args %q, want %q", got, tt.want)
			}
		})
	}
}
