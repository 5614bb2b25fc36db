package truenas

import "github.com/switchyard-csi/switchyard/driver/zfs/engine"

// Copies between two TrueNAS API connections of one system go through the
// middleware's own replication (replication.run_onetime with the LOCAL
// transport, Datasets.SendReceive): the proxy pairs connections whose
// ReplicaEndpoint is equal. Between two systems the source pushes over an
// SSH connection of its keychain that its connection file names
// (replication_push.go); without one the proxy says what to configure.

var _ engine.ReplicaEndpointer = (*apiPlatform)(nil)

// ReplicaEndpoint is the middleware's endpoint: one endpoint, one system.
func (p *apiPlatform) ReplicaEndpoint() string { return p.api.Endpoint() }
