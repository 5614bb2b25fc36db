package backend

import "github.com/container-storage-interface/spec/lib/go/csi"

// Capabilities is the ControllerGetCapabilities answer for a list of RPCs.
func Capabilities(rpcs ...csi.ControllerServiceCapability_RPC_Type) *csi.ControllerGetCapabilitiesResponse {
	caps := make([]*csi.ControllerServiceCapability, len(rpcs))
	for i, r := range rpcs {
		caps[i] = &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: r},
		}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}
}
