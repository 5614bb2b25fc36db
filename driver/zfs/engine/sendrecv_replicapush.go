package engine

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// Copies one storage system pushes to another (TrueNAS replication over
// SSH): the platform knows how; the engine only passes it on.

// ReplicaPusherPlatform is a Platform that can push a snapshot to a
// dataset on another system.
type ReplicaPusherPlatform interface {
	ReplicaPushVia() string
	CheckReplicaPush(ctx context.Context) error
	PushReplica(ctx context.Context, snap, dataset string) error
}

var (
	_ backend.ReplicaPusher = (*Engine)(nil)
	_ backend.ReplicaTarget = (*Engine)(nil)
)

// ReplicaPushVia is what the platform pushes with, "" when it cannot.
func (e *Engine) ReplicaPushVia() string {
	if p, ok := e.plat.(ReplicaPusherPlatform); ok {
		return p.ReplicaPushVia()
	}
	return ""
}

// CheckReplicaPush asks the platform whether a push can start.
func (e *Engine) CheckReplicaPush(ctx context.Context) error {
	p, ok := e.plat.(ReplicaPusherPlatform)
	if !ok || p.ReplicaPushVia() == "" {
		return status.Errorf(codes.FailedPrecondition, "%s: this connection cannot push a copy to another system", e.cfg.driver)
	}
	return p.CheckReplicaPush(ctx)
}

// PushReplica copies snap (on this system) into dataset on the other.
func (e *Engine) PushReplica(ctx context.Context, snap, dataset string) error {
	p, ok := e.plat.(ReplicaPusherPlatform)
	if !ok {
		return status.Errorf(codes.FailedPrecondition, "%s: this connection cannot push a copy to another system", e.cfg.driver)
	}
	return p.PushReplica(ctx, snap, dataset)
}
