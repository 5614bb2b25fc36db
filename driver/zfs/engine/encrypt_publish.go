package engine

// Loading an encrypted volume's key when it is published. A reboot of the
// storage host (or a pool export and import) leaves every key unloaded:
// the datasets stay unmounted and unshared, zvols have no device, and a
// pod using such a volume cannot start. CreateVolume carries the
// provisioner secret and loads a key it finds unloaded, but an existing
// volume is never created again; ControllerPublishVolume is the call
// every attach of a volume goes through, and the external-attacher gives
// it the secret the StorageClass names as
// csi.storage.k8s.io/controller-publish-secret-name/-namespace. The proxy
// sends every connection's publish to its backend, so the engine answers
// it even where there is nothing to attach (open targets).
//
// Cost: the key status is read in the same `zfs get` that reads the
// volume, so a volume whose key is loaded, or an unencrypted one, costs no
// extra round trip; only an unloaded key adds the load (and the mount and
// share of a filesystem).

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// The StorageClass parameters that make the external-attacher pass a
// secret to ControllerPublishVolume.
const (
	ParamPublishSecretName      = "csi.storage.k8s.io/controller-publish-secret-name"      //nolint:gosec // G101: a StorageClass parameter name
	ParamPublishSecretNamespace = "csi.storage.k8s.io/controller-publish-secret-namespace" //nolint:gosec // G101: a StorageClass parameter name
)

// publishKeyProps are read with a volume at ControllerPublishVolume: the
// key status, where a key can be loaded at all (the zfs command line;
// the TrueNAS API drivers make no encrypted volumes).
func (e *Engine) publishKeyProps() []string {
	if _, ok := e.programs(); ok {
		return keyProps
	}
	return nil
}

// noKeyProps: the host's zfs has no encryption properties (zfs-fuse,
// OpenZFS before 0.8), so it has no encrypted volumes either.
func noKeyProps(err error) bool {
	for _, p := range keyProps {
		if strings.Contains(err.Error(), "invalid property '"+p+"'") {
			return true
		}
	}
	return false
}

// publishKey loads the key of a volume being published when zfs has it
// unloaded, with the publish secret's encryptionKey. Without one it is
// FAILED_PRECONDITION naming the dataset, its encryption root and the
// StorageClass parameters to set; the key is never in an error or a log.
func (e *Engine) publishKey(ctx context.Context, ds string, props zfs.Properties, secrets map[string]string) error {
	if !keyUnavailable(props) {
		return nil
	}
	root := encryptionRoot(ds, props)
	enc, err := ParseEncryption(nil, secrets)
	if err != nil {
		return status.Errorf(codes.FailedPrecondition, "%s is encrypted and the key of its encryption root %s is not loaded, and the controller-publish secret cannot load it: %s", ds, root, status.Convert(err).Message())
	}
	if enc == nil {
		return status.Errorf(codes.FailedPrecondition, "%s is encrypted and the key of its encryption root %s is not loaded (the storage host restarted or its pool was imported): "+
			"name the secret that holds its %s in the StorageClass parameters %s and %s (the external-attacher passes it to ControllerPublishVolume, which loads the key), or run `zfs load-key %s` on the storage host",
			ds, root, SecretEncryptionKey, ParamPublishSecretName, ParamPublishSecretNamespace, root)
	}
	return e.loadKey(ctx, ds, root, enc, true)
}
