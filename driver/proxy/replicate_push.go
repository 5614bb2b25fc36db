package proxy

import (
	"context"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// Copies one storage system pushes to another (TrueNAS API connections
// of two systems, the source's file naming an SSH connection of its
// keychain as replication.sshCredentials): the source system replicates
// over SSH straight into the dataset the target connection chose, and the
// target finishes the volume. Only names pass through the controller.

// truenasPushKey is the connection-file key (driver/truenas
// PushCredentialKey; the proxy does not import backends).
const truenasPushKey = "replication.sshCredentials"

// pushPair pairs a source that can push with a target that can receive a
// push, when their volumes are of one kind (the part after '#' of the
// endpoints: a filesystem is not received as a zvol).
func pushPair(rs, rd backend.Replicator, es, ed string) (backend.StreamSender, backend.StreamReceiver, bool) {
	_, ks, _ := strings.Cut(es, "#")
	_, kd, _ := strings.Cut(ed, "#")
	if ks != kd {
		return nil, nil, false
	}
	ps, ok := rs.(backend.ReplicaPusher)
	if !ok || ps.ReplicaPushVia() == "" {
		return nil, nil, false
	}
	td, ok := rd.(backend.ReplicaTarget)
	if !ok {
		return nil, nil, false
	}
	receive := func(ctx context.Context, req *csipb.CreateVolumeRequest, snap string) (*csipb.CreateVolumeResponse, error) {
		return td.ReceiveReplicaWith(ctx, req, func(ctx context.Context, dataset string) error {
			return ps.PushReplica(ctx, snap, dataset)
		})
	}
	return replicaSender{r: ps, check: ps.CheckReplicaPush}, replicaReceiver{receive: receive}, true
}
