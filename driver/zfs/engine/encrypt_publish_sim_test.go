package engine_test

// An encrypted volume after a reboot of its storage host: every key is
// unloaded (here `zfs unload-key` behind the engine's back stands for the
// reboot), and the volume must be usable again when it is published
// (ControllerPublishVolume with the StorageClass's controller-publish
// secret) or cloned (CreateVolume with the new class's provisioner
// secret), without the key ever reaching a log or an error.

import (
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

func (s *encSim) publish(id string, secrets map[string]string) error {
	_, err := s.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
		VolumeId: id, NodeId: "n=node-a", VolumeCapability: capability(sngw, s.block, ""), Secrets: secrets,
	})
	return err
}

// keyState is what the host says of ds's key, its mount and (a zvol) its
// device.
func (s *encSim) keyState(t *testing.T, ds string) string {
	t.Helper()
	st := zfsGet(t, s.host, "keystatus", ds)
	if s.block {
		_, dev := s.host.Model.ZvolPath(ds)
		return st + map[bool]string{true: " device", false: " no-device"}[dev]
	}
	return st + " mounted=" + zfsGet(t, s.host, "mounted", ds)
}

// commands counts the commands the driver ran (its "command finished"
// lines, the same whether a command went as its own exec or to the slot's
// long-lived shell) that contain what, from the log mark on.
func (s *encSim) commands(mark int, what string) int {
	n := 0
	for _, l := range strings.Split(s.logs.String()[mark:], "\n") {
		if strings.Contains(l, `msg="command finished"`) && strings.Contains(l, what) {
			n++
		}
	}
	return n
}

// TestSimEncryptionPublishAfterReboot: publishing a volume whose key the
// host lost loads it with the publish secret (then mounts a filesystem or
// brings back a zvol's device); without the secret it is
// FAILED_PRECONDITION naming the dataset and the StorageClass parameters
// to set, with a wrong key FAILED_PRECONDITION with zfs's reason; a loaded
// key or an unencrypted volume is published with one zfs command and no
// load-key.
func TestSimEncryptionPublishAfterReboot(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			s := newEncSim(t, d.driver)
			secrets := map[string]string{engine.SecretEncryptionKey: encPass}
			v, err := s.create("pvc-enc", secrets, map[string]string{engine.ParamEncryption: "true"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := s.create("pvc-plain", nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ds := s.parent + "/" + v.GetVolumeId()
			up := "available mounted=yes"
			down := "unavailable mounted=no"
			if s.block {
				up, down = "available device", "unavailable no-device"
			}

			mark := len(s.logs.String())
			if err := s.publish(v.GetVolumeId(), nil); err != nil {
				t.Fatalf("publish with the key loaded: %v", err)
			}
			if err := s.publish(plain.GetVolumeId(), nil); err != nil {
				t.Fatalf("publish of an unencrypted volume: %v", err)
			}
			if n, l := s.commands(mark, ""), s.commands(mark, "load-key"); n != 2 || l != 0 {
				t.Errorf("two publishes with nothing to load ran %d commands and %d load-key, want 2 and 0:\n%s", n, l, s.logs.String()[mark:])
			}

			zfsLines(t, s.host, "unload-key", ds) // the reboot
			if got := s.keyState(t, ds); got != down {
				t.Fatalf("after unload-key: %q, want %q", got, down)
			}

			err = s.publish(v.GetVolumeId(), nil)
			if status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("publish without a secret: %v, want FAILED_PRECONDITION", err)
			}
			for _, want := range []string{ds, engine.ParamPublishSecretName, engine.ParamPublishSecretNamespace, engine.SecretEncryptionKey} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("publish without a secret: %v does not name %s", err, want)
				}
			}
			const wrong = "wrong horse battery staple"
			err = s.publish(v.GetVolumeId(), map[string]string{engine.SecretEncryptionKey: wrong})
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), ds) || !strings.Contains(err.Error(), "Incorrect key") {
				t.Errorf("publish with a wrong key: %v, want FAILED_PRECONDITION naming %s and zfs's reason", err, ds)
			}
			err = s.publish(v.GetVolumeId(), map[string]string{engine.SecretEncryptionKey: "short"})
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "8 to 512") {
				t.Errorf("publish with a malformed key: %v, want FAILED_PRECONDITION with the rule", err)
			}
			if got := s.keyState(t, ds); got != down {
				t.Errorf("after the refused publishes: %q, want %q", got, down)
			}

			if err := s.publish(v.GetVolumeId(), secrets); err != nil {
				t.Fatalf("publish with the secret: %v", err)
			}
			if got := s.keyState(t, ds); got != up {
				t.Errorf("after publish with the secret: %q, want %q", got, up)
			}
			mark = len(s.logs.String())
			if err := s.publish(v.GetVolumeId(), secrets); err != nil {
				t.Fatalf("publish again: %v", err)
			}
			if l := s.commands(mark, "load-key"); l != 0 {
				t.Errorf("a second publish ran load-key %d times", l)
			}
			for _, e := range []error{err} {
				if e != nil && strings.Contains(e.Error(), encPass) {
					t.Errorf("the key is in an error: %v", e)
				}
			}
			s.noKeyAnywhere(t, encPass, wrong)
		})
	}
}

// TestSimEncryptionPublishClone: a clone's key is its origin's (its
// encryption root): publishing the clone after a reboot loads the key on
// the root, which zfs requires (load-key on the clone itself is refused).
func TestSimEncryptionPublishClone(t *testing.T) {
	s := newEncSim(t, "zfs-generic-nfs")
	secrets := map[string]string{engine.SecretEncryptionKey: encPass}
	params := map[string]string{engine.ParamEncryption: "true"}
	if _, err := s.create("pvc-src", secrets, params, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.create("pvc-clone", secrets, params, volumeSource("pvc-src")); err != nil {
		t.Fatal(err)
	}
	src, clone := s.parent+"/pvc-src", s.parent+"/pvc-clone"
	zfsLines(t, s.host, "unload-key", src)
	err := s.publish("pvc-clone", nil)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), clone) || !strings.Contains(err.Error(), "encryption root "+src) {
		t.Errorf("publish of the clone without a secret: %v, want FAILED_PRECONDITION naming it and its encryption root", err)
	}
	if err := s.publish("pvc-clone", secrets); err != nil {
		t.Fatalf("publish of the clone: %v", err)
	}
	if got := s.keyState(t, clone); got != "available mounted=yes" {
		t.Errorf("clone after publish: %q", got)
	}
	if got := zfsGet(t, s.host, "keystatus", src); got != "available" {
		t.Errorf("its encryption root after publish: %q", got)
	}
	s.noKeyAnywhere(t, encPass)
}

// TestSimEncryptionCloneAfterReboot: a volume cloned from an encrypted
// volume or restored from its snapshot after the host lost the key gets
// the source's key loaded with the new class's provisioner secret; without
// one it is FAILED_PRECONDITION naming the source and nothing is made.
func TestSimEncryptionCloneAfterReboot(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			s := newEncSim(t, d.driver)
			secrets := map[string]string{engine.SecretEncryptionKey: encPass}
			if _, err := s.create("pvc-src", secrets, map[string]string{engine.ParamEncryption: "true"}, nil); err != nil {
				t.Fatal(err)
			}
			src := s.parent + "/pvc-src"
			snap, err := s.snapshot("snap-1", "pvc-src", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				src  *csi.VolumeContentSource
			}{
				{"pvc-restored", snapshotSource(snap.GetSnapshotId())},
				{"pvc-clone", volumeSource("pvc-src")},
			} {
				zfsLines(t, s.host, "unload-key", src) // the reboot
				_, err := s.create(c.name, nil, nil, c.src)
				if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), "provisioner-secret-name") {
					t.Errorf("%s without a key: %v, want FAILED_PRECONDITION naming %s and the provisioner secret", c.name, err, src)
				}
				if got := zfsLines(t, s.host, "list", "-H", "-o", "name", s.parent+"/"+c.name); len(got) != 0 {
					t.Errorf("%s refused but made: %v", c.name, got)
				}
				const wrong = "wrong horse battery staple"
				_, err = s.create(c.name, map[string]string{engine.SecretEncryptionKey: wrong}, nil, c.src)
				if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "Incorrect key") || strings.Contains(err.Error(), wrong) {
					t.Errorf("%s with a wrong key: %v, want FAILED_PRECONDITION with zfs's reason and no key", c.name, err)
				}
				v, err := s.create(c.name, secrets, nil, c.src)
				if err != nil {
					t.Fatalf("%s with the key: %v", c.name, err)
				}
				ds := s.parent + "/" + v.GetVolumeId()
				if got := encProps(t, s.host, ds); !strings.HasSuffix(got, src+" available") {
					t.Errorf("%s: %q, want the source's encryption root with its key loaded", c.name, got)
				}
			}
			s.noKeyAnywhere(t, encPass, "wrong horse battery staple")
		})
	}
}
