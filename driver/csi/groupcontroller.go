package csi

import (
	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// GroupProvider is a controller that may also serve the CSI GroupController
// service (volume group snapshots). GroupController returns nil when this
// controller cannot take atomic group snapshots; the service is then not
// registered, and GROUP_CONTROLLER_SERVICE must not be advertised.
type GroupProvider interface {
	GroupController() csipb.GroupControllerServer
}

// GroupControllerOf is the group service of a controller, or nil.
func GroupControllerOf(c csipb.ControllerServer) csipb.GroupControllerServer {
	if gp, ok := c.(GroupProvider); ok {
		return gp.GroupController()
	}
	return nil
}

// RegisterGroupController adds the GroupController service behind the same
// interceptor chain (recovery, status-only errors, logging without
// secrets). It must be called before Serve; a nil g registers nothing and
// reports false.
func (s *Server) RegisterGroupController(g csipb.GroupControllerServer) bool {
	if g == nil {
		return false
	}
	csipb.RegisterGroupControllerServer(s.grpc, g)
	return true
}

// AdvertiseGroup returns c's group service and, when there is one, adds
// GROUP_CONTROLLER_SERVICE to the identity's plugin capabilities (a
// standalone backend knows only once built whether it can take atomic
// group snapshots).
func AdvertiseGroup(id *Identity, c csipb.ControllerServer) csipb.GroupControllerServer {
	g := GroupControllerOf(c)
	if g == nil || id == nil {
		return g
	}
	for _, pc := range id.Capabilities {
		if pc.GetService().GetType() == csipb.PluginCapability_Service_GROUP_CONTROLLER_SERVICE {
			return g
		}
	}
	id.Capabilities = append(id.Capabilities, ServiceCapability(csipb.PluginCapability_Service_GROUP_CONTROLLER_SERVICE))
	return g
}
