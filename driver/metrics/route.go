package metrics

import (
	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// Router names the connection a request is routed to, as the proxy routes
// it; ok is false when the request names none.
type Router func(req any) (conn string, ok bool)

// ProxyRouter routes like the proxy: the connection of a v:/s: handle, the
// `connection` parameter, or defaultConn for a request that carries a
// handle without prefix or no parameter.
func ProxyRouter(defaultConn string) Router {
	return func(req any) (string, bool) {
		switch r := req.(type) {
		case *csipb.CreateVolumeRequest:
			return param(r.GetParameters(), defaultConn)
		case *csipb.GetCapacityRequest:
			return param(r.GetParameters(), defaultConn)
		case *csipb.CreateSnapshotRequest:
			return handle(proxy.VolumePrefix, r.GetSourceVolumeId(), defaultConn)
		case interface{ GetSnapshotId() string }: // DeleteSnapshot
			return handle(proxy.SnapshotPrefix, r.GetSnapshotId(), defaultConn)
		case interface{ GetVolumeId() string }: // every other volume call, controller and node
			return handle(proxy.VolumePrefix, r.GetVolumeId(), defaultConn)
		}
		return "", false
	}
}

func param(p map[string]string, defaultConn string) (string, bool) {
	if c := p[proxy.ConnectionParameter]; c != "" {
		return c, true
	}
	return defaultConn, defaultConn != ""
}

// handle: a handle that parses names its connection; one that does not
// names an unknown one (not "none": the call was meant for a connection).
func handle(prefix, h, defaultConn string) (string, bool) {
	if h == "" {
		return "", false
	}
	if c, _, ok := proxy.Resolve(prefix, h, defaultConn); ok {
		return c, true
	}
	return UnknownConnection, true
}
