package dirvol

import (
	"context"

	"github.com/switchyard-csi/switchyard/driver/keylock"
)

// keyLocks serialises work on one volume or snapshot directory inside this
// driver. The gRPC layer already serialises calls per name and per id, but
// not a CreateVolume (locked by name) against a DeleteVolume of the id it
// maps to, nor two names hashed to one id (crc8 has 256 values), and tests
// call the driver directly.
type keyLocks struct{ set keylock.Set }

// lock takes every key and returns the function that releases them. It
// waits as long as it takes: the calls it guards are short filesystem work.
func (l *keyLocks) lock(keys ...string) (unlock func()) {
	unlock, _ = l.set.Lock(context.Background(), keys...) // never fails without a deadline
	return unlock
}
