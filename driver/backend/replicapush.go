package backend

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// ReplicaPusher is a Replicator whose storage system can push a copy to
// another system by itself (TrueNAS: replication.run_onetime with the SSH
// transport and a keychain credential the connection file names). The
// proxy pairs it with a ReplicaTarget of another system; the data moves
// between the two systems, only names pass through the controller.
type ReplicaPusher interface {
	Replicator
	// ReplicaPushVia is what the connection names for pushing (a
	// credential), "" when it names nothing: then it cannot push.
	ReplicaPushVia() string
	// CheckReplicaPush says whether the push can start (the credential
	// exists), before anything is made on either side.
	CheckReplicaPush(ctx context.Context) error
	// PushReplica copies snap into dataset on the system ReplicaPushVia
	// reaches.
	PushReplica(ctx context.Context, snap, dataset string) error
}

// ReplicaTarget is a Replicator that can receive a copy another system
// pushes: copyTo is called with the dataset the new volume lives in (its
// parent made), and the volume is then finished as ReceiveReplica does.
type ReplicaTarget interface {
	Replicator
	ReceiveReplicaWith(ctx context.Context, req *csi.CreateVolumeRequest, copyTo func(ctx context.Context, dataset string) error) (*csi.CreateVolumeResponse, error)
}
