package zfsgeneric

import "time"

// SetTargetListingTTL sets how long a listing of the host's targets serves
// health checks, for the tests of this package; it returns the restore.
func SetTargetListingTTL(d time.Duration) (restore func()) {
	old := targetListingTTL
	targetListingTTL = d
	return func() { targetListingTTL = old }
}
