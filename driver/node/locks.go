package node

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/keylock"
)

// volumeLocks serialises calls on one volume while unrelated volumes
// proceed in parallel. The gRPC layer serialises per volume too; this makes
// the Service safe on its own (records are read-modify-write).
type volumeLocks struct{ set keylock.Set }

func newVolumeLocks() *volumeLocks { return &volumeLocks{} }

// lock waits for the volume's lock, or fails with ABORTED when ctx ends
// first (the CO retries). It returns the unlock function.
func (l *volumeLocks) lock(ctx context.Context, id string) (func(), error) {
	unlock, err := l.set.Lock(ctx, id)
	if err != nil {
		return nil, status.Errorf(codes.Aborted, "volume %s: another operation on it is in progress (%v)", id, err)
	}
	return unlock, nil
}
