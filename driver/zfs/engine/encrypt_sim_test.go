package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// TestCreateVolumeEncryptedReachesZFS: CreateVolume with the encryption
// secret takes the encrypted create (the one-shot program would make a
// plain dataset). The simulated host does not model encryption and refuses
// it, so the call must fail without the key in its error and leave nothing
// behind; a missing key is refused before any command runs.
func TestCreateVolumeEncryptedReachesZFS(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-nfs", "enc", nil)
	const key = "correct horse battery staple"
	req := &csi.CreateVolumeRequest{
		Name:               "pvc-enc",
		CapacityRange:      &csi.CapacityRange{RequiredBytes: 1 << 20},
		VolumeCapabilities: []*csi.VolumeCapability{capability(csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, false, "")},
		Parameters:         map[string]string{engine.ParamEncryption: "true"},
		Secrets:            map[string]string{engine.SecretEncryptionKey: key},
	}
	_, err := s.CreateVolume(context.Background(), req)
	if err == nil {
		t.Fatal("the simulated host made an encrypted volume it cannot model: the request did not reach the encrypted create")
	}
	if strings.Contains(err.Error(), key) {
		t.Fatalf("the key is in the error: %v", err)
	}
	if !strings.Contains(err.Error(), "encryption") {
		t.Errorf("the error does not say encryption: %v", err)
	}
	if lines := zfsLines(t, h, "list", "-H", "-o", "name", "-r", s.parent); len(lines) > 1 {
		t.Errorf("datasets left behind: %q", lines)
	}

	req.Name, req.Secrets = "pvc-nokey", nil
	_, err = s.CreateVolume(context.Background(), req)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), engine.SecretEncryptionKey) {
		t.Fatalf("no key: %v, want INVALID_ARGUMENT naming %s", err, engine.SecretEncryptionKey)
	}
}
